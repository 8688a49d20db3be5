//! The bundle: every module a project's TypeScript nodes need, as QuickJS bytecode, in
//! one byte string that the generated server embeds (`include_bytes!`).
//!
//! ```text
//! "SVCQJS1\n"  u32 count  { u32 name length, name, u32 code length, code }*
//! ```
//!
//! Names are the modules' names in the bundle: `svc:host` (the engine's glue),
//! `@svc/sdk`, and each project module by its path (`src/nodes/price-order.ts`); svc has
//! rewritten every import to one of these names, so loading needs no resolution rules.

use rquickjs::Ctx;
use rquickjs::loader::{ImportAttributes, Resolver};
use std::collections::HashSet;

const MAGIC: &[u8; 8] = b"SVCQJS1\n";

/// Resolves an import to the module of that very name: svc wrote every import as a
/// name of the bundle. Used to compile the modules and to load them.
pub(crate) struct ByName(pub HashSet<String>);

impl Resolver for ByName {
    fn resolve<'js>(
        &mut self,
        _ctx: &Ctx<'js>,
        base: &str,
        name: &str,
        _attributes: Option<ImportAttributes<'js>>,
    ) -> rquickjs::Result<String> {
        if self.0.contains(name) {
            Ok(name.to_string())
        } else {
            Err(rquickjs::Error::new_resolving(base, name))
        }
    }
}

/// Encodes `(name, bytecode)` pairs.
pub fn encode(modules: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.extend((modules.len() as u32).to_le_bytes());
    for (name, code) in modules {
        out.extend((name.len() as u32).to_le_bytes());
        out.extend(name.as_bytes());
        out.extend((code.len() as u32).to_le_bytes());
        out.extend(code);
    }
    out
}

/// Decodes a bundle; `None` when it is not one (truncated, or written by another format).
pub fn decode(bytes: &[u8]) -> Option<Vec<(&str, &[u8])>> {
    let mut rest = bytes.strip_prefix(MAGIC.as_slice())?;
    let mut take = |n: usize| -> Option<&[u8]> {
        let (head, tail) = rest.split_at_checked(n)?;
        rest = tail;
        Some(head)
    };
    let count = u32::from_le_bytes(take(4)?.try_into().ok()?);
    let mut modules = Vec::with_capacity(count.min(1024) as usize);
    for _ in 0..count {
        let len = u32::from_le_bytes(take(4)?.try_into().ok()?) as usize;
        let name = std::str::from_utf8(take(len)?).ok()?;
        let len = u32::from_le_bytes(take(4)?.try_into().ok()?) as usize;
        modules.push((name, take(len)?));
    }
    Some(modules)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_what_is_not_a_bundle() {
        let modules = vec![("a".to_string(), vec![1, 2, 3]), ("src/b.ts".to_string(), vec![])];
        let bytes = encode(&modules);
        let decoded = decode(&bytes).unwrap();
        assert_eq!(decoded, [("a", &[1u8, 2, 3][..]), ("src/b.ts", &[][..])]);
        assert!(decode(&bytes[..bytes.len() - 1]).is_none());
        assert!(decode(b"not a bundle").is_none());
    }
}
