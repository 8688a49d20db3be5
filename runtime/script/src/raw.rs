//! The few QuickJS calls the hot path makes below rquickjs's safe API, each wrapped once.
//!
//! rquickjs names every property by text, which makes QuickJS hash the name into an atom
//! on each access, and reads an object's keys as Rust `String`s. Moving a node's inputs
//! and outputs across the boundary (convert.rs) does that for every field of every call;
//! here the names are atoms made once per runtime ([`Atoms`]), objects are written with
//! `JS_DefinePropertyValue` (an own data property, as `JSON.parse` makes: no setter on
//! the prototype runs, and a key `__proto__` is a key), and arrays are made whole.
//!
//! Every `unsafe` block of the crate's value handling is in this module.

use rquickjs::qjs;
use rquickjs::{Array, Ctx, Object, Value};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// An atom owned by a runtime's [`Atoms`]: valid while the runtime lives.
pub type Atom = qjs::JSAtom;

/// Property names as atoms, made once per runtime and kept until it is dropped.
///
/// Keyed by the address of the name: the names are serde's field names (`&'static str`),
/// so the same name is the same key on every call with no hashing of its text.
pub struct Atoms {
    runtime: *mut qjs::JSRuntime,
    names: RefCell<ByName<Atom>>,
    lists: RefCell<ByName<Rc<[Atom]>>>,
}

/// A map from the address and length of a `'static` name (or list of names).
pub type ByName<T> = HashMap<(usize, usize), T, ByAddress>;

/// The key of a `'static` name in a [`ByName`] map.
pub fn name_key(name: &'static str) -> (usize, usize) {
    (name.as_ptr() as usize, name.len())
}

/// Hashes an address and a length: SipHash's defence against chosen keys buys nothing
/// for addresses of the program's own names, and cost more than the rest of the lookup.
#[derive(Default, Clone, Copy)]
pub struct ByAddress;

impl std::hash::BuildHasher for ByAddress {
    type Hasher = AddressHasher;
    fn build_hasher(&self) -> AddressHasher {
        AddressHasher(0)
    }
}

pub struct AddressHasher(u64);

impl std::hash::Hasher for AddressHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
    fn write_u64(&mut self, n: u64) {
        // FxHash's step: a rotate, a xor and a multiply by a large odd constant.
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

impl Atoms {
    /// The cache of the runtime `ctx` belongs to. Drop it before the runtime.
    pub fn new(ctx: &Ctx) -> Atoms {
        // SAFETY: `ctx` is a live context; its runtime outlives this cache (Worker's
        // field order drops the cache first).
        let runtime = unsafe { qjs::JS_GetRuntime(ctx.as_raw().as_ptr()) };
        Atoms {
            runtime,
            names: RefCell::default(),
            lists: RefCell::default(),
        }
    }

    /// The atom of `name`.
    pub fn name(&self, ctx: &Ctx, name: &'static str) -> rquickjs::Result<Atom> {
        let key = name_key(name);
        if let Some(atom) = self.names.borrow().get(&key) {
            return Ok(*atom);
        }
        let atom = new_atom(ctx, name)?;
        self.names.borrow_mut().insert(key, atom);
        Ok(atom)
    }

    /// The atoms of a struct's field names, in their order.
    pub fn names(&self, ctx: &Ctx, names: &'static [&'static str]) -> rquickjs::Result<Rc<[Atom]>> {
        let key = (names.as_ptr() as usize, names.len());
        if let Some(atoms) = self.lists.borrow().get(&key) {
            return Ok(atoms.clone());
        }
        let atoms: Rc<[Atom]> = names
            .iter()
            .map(|name| self.name(ctx, name))
            .collect::<rquickjs::Result<_>>()?;
        self.lists.borrow_mut().insert(key, atoms.clone());
        Ok(atoms)
    }
}

impl Drop for Atoms {
    fn drop(&mut self) {
        for atom in self.names.get_mut().values() {
            // SAFETY: each atom was made in this runtime, which is still alive, and is
            // freed once (`lists` holds copies, not references).
            unsafe { qjs::JS_FreeAtomRT(self.runtime, *atom) };
        }
    }
}

/// A new atom for `name`, owned by the caller.
fn new_atom(ctx: &Ctx, name: &str) -> rquickjs::Result<Atom> {
    // SAFETY: the pointer and length describe `name`'s bytes for the duration of the call.
    let atom = unsafe { qjs::JS_NewAtomLen(ctx.as_raw().as_ptr(), name.as_ptr().cast(), name.len() as _) };
    if atom == qjs::JS_ATOM_NULL {
        return Err(rquickjs::Error::Allocation);
    }
    Ok(atom)
}

/// Gives `value`'s reference to QuickJS (for a call that takes ownership).
fn into_raw(value: Value) -> qjs::JSValue {
    let raw = value.as_raw();
    // SAFETY: one more reference, then `value` drops its own: the count is unchanged and
    // the caller's JSValue owns one.
    unsafe { qjs::JS_DupValue(value.ctx().as_raw().as_ptr(), raw) };
    raw
}

/// An owned JSValue back as a `Value`, or the pending exception as an error.
fn from_raw<'js>(ctx: &Ctx<'js>, raw: qjs::JSValue) -> rquickjs::Result<Value<'js>> {
    // SAFETY: `raw` is owned (a QuickJS call returned it) and of this context; an
    // exception marker holds no reference.
    unsafe {
        if qjs::JS_IsException(raw) {
            return Err(rquickjs::Error::Exception);
        }
        Ok(Value::from_raw(ctx.clone(), raw))
    }
}

/// The tag of a value (`JS_TAG_*`: what kind of value it is), with no call.
pub fn tag(value: &Value) -> i32 {
    // SAFETY: reading the tag of a live value.
    unsafe { qjs::JS_VALUE_GET_NORM_TAG(value.as_raw()) }
}

/// Defines `object[key] = value` as an own, writable, enumerable, configurable property.
pub fn define<'js>(ctx: &Ctx<'js>, object: &Object<'js>, key: Atom, value: Value<'js>) -> rquickjs::Result<()> {
    define_with(ctx, object, key, value, qjs::JS_PROP_C_W_E)
}

fn define_with<'js>(
    ctx: &Ctx<'js>,
    object: &Object<'js>,
    key: Atom,
    value: Value<'js>,
    flags: u32,
) -> rquickjs::Result<()> {
    let value = into_raw(value);
    // SAFETY: `object` and `value` are of `ctx`; `value`'s reference is taken by the call
    // (freed by it on failure too); `key` is a live atom.
    let status = unsafe { qjs::JS_DefinePropertyValue(ctx.as_raw().as_ptr(), object.as_raw(), key, value, flags as _) };
    if status < 0 {
        return Err(rquickjs::Error::Exception);
    }
    Ok(())
}

/// A frozen object of prototype `proto` with `fields` (what `Object.freeze` makes of an
/// object literal, made without one more pass over its properties).
pub fn frozen<'js>(
    ctx: &Ctx<'js>,
    proto: &Object<'js>,
    fields: [(Atom, Value<'js>); 3],
) -> rquickjs::Result<Object<'js>> {
    // SAFETY: `proto` is of `ctx`; the new object is owned.
    let object = from_raw(ctx, unsafe {
        qjs::JS_NewObjectProto(ctx.as_raw().as_ptr(), proto.as_raw())
    })?
    .into_object()
    .ok_or(rquickjs::Error::Allocation)?;
    for (key, value) in fields {
        // Enumerable, neither writable nor configurable.
        define_with(ctx, &object, key, value, qjs::JS_PROP_ENUMERABLE)?;
    }
    // SAFETY: a live object of `ctx`.
    if unsafe { qjs::JS_PreventExtensions(ctx.as_raw().as_ptr(), object.as_raw()) } < 0 {
        return Err(rquickjs::Error::Exception);
    }
    Ok(object)
}

/// Defines `object[name] = value` for a name known only now (a map's key).
pub fn define_named<'js>(ctx: &Ctx<'js>, object: &Object<'js>, name: &str, value: Value<'js>) -> rquickjs::Result<()> {
    let atom = new_atom(ctx, name)?;
    let defined = define(ctx, object, atom, value);
    // SAFETY: the atom was made above and is not used again.
    unsafe { qjs::JS_FreeAtom(ctx.as_raw().as_ptr(), atom) };
    defined
}

/// `object[key]` (a getter runs; an exception it throws is the error).
pub fn get<'js>(ctx: &Ctx<'js>, object: &Object<'js>, key: Atom) -> rquickjs::Result<Value<'js>> {
    // SAFETY: `object` is of `ctx`; the returned value is owned.
    from_raw(ctx, unsafe {
        qjs::JS_GetProperty(ctx.as_raw().as_ptr(), object.as_raw(), key)
    })
}

/// An array of `values`, made at its full length at once.
pub fn array<'js>(ctx: &Ctx<'js>, values: Vec<Value<'js>>) -> rquickjs::Result<Array<'js>> {
    let raw: Vec<qjs::JSValue> = values.into_iter().map(into_raw).collect();
    // SAFETY: the call takes every value's reference (and frees them if it fails).
    let array = from_raw(ctx, unsafe {
        qjs::JS_NewArrayFrom(ctx.as_raw().as_ptr(), raw.len() as _, raw.as_ptr())
    })?;
    array.into_array().ok_or(rquickjs::Error::Allocation)
}

/// The text of an atom (a key that is not a known field name).
pub fn atom_text(ctx: &Ctx, atom: Atom) -> rquickjs::Result<String> {
    // SAFETY: `atom` is live; the C string is copied and freed before returning.
    unsafe {
        let mut len: qjs::size_t = 0;
        let text = qjs::JS_AtomToCStringLen(ctx.as_raw().as_ptr(), &mut len, atom);
        if text.is_null() {
            return Err(rquickjs::Error::Allocation);
        }
        let bytes = std::slice::from_raw_parts(text.cast::<u8>(), len as usize);
        let owned = String::from_utf8_lossy(bytes).into_owned();
        qjs::JS_FreeCString(ctx.as_raw().as_ptr(), text);
        Ok(owned)
    }
}

/// An object's own enumerable string keys, in property order (what `JSON.stringify`
/// and `Object.keys` see).
pub struct OwnKeys<'js> {
    ctx: Ctx<'js>,
    table: *mut qjs::JSPropertyEnum,
    len: u32,
}

impl<'js> OwnKeys<'js> {
    pub fn of(ctx: &Ctx<'js>, object: &Object<'js>) -> rquickjs::Result<OwnKeys<'js>> {
        let mut table = std::ptr::null_mut();
        let mut len = 0;
        // SAFETY: out-pointers to locals; on success QuickJS hands us the table.
        let status = unsafe {
            qjs::JS_GetOwnPropertyNames(
                ctx.as_raw().as_ptr(),
                &mut table,
                &mut len,
                object.as_raw(),
                (qjs::JS_GPN_STRING_MASK | qjs::JS_GPN_ENUM_ONLY) as _,
            )
        };
        if status < 0 {
            return Err(rquickjs::Error::Exception);
        }
        Ok(OwnKeys {
            ctx: ctx.clone(),
            table,
            len,
        })
    }

    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// The `i`th key (`i < len`).
    pub fn atom(&self, i: usize) -> Atom {
        assert!(i < self.len as usize);
        // SAFETY: in bounds of the table QuickJS returned.
        unsafe { (*self.table.add(i)).atom }
    }
}

impl Drop for OwnKeys<'_> {
    fn drop(&mut self) {
        // SAFETY: the table and its atoms are ours, freed once.
        unsafe { qjs::JS_FreePropertyEnum(self.ctx.as_raw().as_ptr(), self.table, self.len) };
    }
}
