//! What the translation knows at a point of the code: the locals in scope (innermost
//! last), the optional paths a check has narrowed, and the functions being translated
//! (`run`, a helper, a callback), with what their `return`s return.

use super::types::{Kind, Ty, Val};
use proc_macro2::Ident;
use quote::{format_ident, quote};

/// How a local holds its value.
#[derive(Debug, Clone)]
pub enum Holds {
    /// The value itself (`let l_x = …;`), read as a place.
    Value,
    /// A reference to a place whose root is never assigned (`let l_x = &ctx.inputs.order;`).
    Ref,
    /// A `&'static str`.
    Static,
}

#[derive(Debug, Clone)]
pub struct Local {
    pub name: String,
    pub rust: Ident,
    pub ty: Ty,
    pub holds: Holds,
    /// `let`: it may be assigned; paths through it are not narrowed.
    pub mutable: bool,
    /// The function (index in [`Scope::functions`]) that declared it.
    pub function: usize,
    /// How many `for … of` loops were open where it was declared.
    pub loop_depth: usize,
    /// How many callbacks and loops were open where it was declared.
    pub iteration: usize,
}

impl Local {
    pub fn read(&self) -> Val {
        let rust = &self.rust;
        let (code, kind) = match (&self.holds, self.ty.is_copy()) {
            (_, true) => (quote!(#rust), Kind::Owned),
            (Holds::Value, _) => (quote!(#rust), Kind::Place),
            (Holds::Ref, _) => (quote!((*#rust)), Kind::Place),
            (Holds::Static, _) => (quote!(#rust), Kind::Static),
        };
        Val {
            ty: self.ty.clone(),
            code,
            kind,
            path: (!self.mutable).then(|| self.name.clone()),
            root: Some(self.name.clone()),
        }
    }
}

/// What kind of function is being translated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FunctionKind {
    /// The node's `run`: its `return` is the outputs.
    Run,
    /// A module function the node calls.
    Helper,
    /// A callback of an array method.
    Callback,
}

#[derive(Debug, Clone)]
pub struct Function {
    pub kind: FunctionKind,
    /// The type its `return`s return, once one was seen.
    pub returns: Option<Ty>,
}

#[derive(Debug, Default)]
pub struct Scope {
    blocks: Vec<Vec<Local>>,
    narrowed: Vec<Vec<String>>,
    pub functions: Vec<Function>,
    /// The element names of the callbacks and `for … of` loops being translated,
    /// innermost last: inside one, only what its element holds may be iterated, so
    /// that work stays linear in the input.
    pub elements: Vec<String>,
    /// `for … of` loops open in the current function (`break` and `continue` need one).
    pub loops: usize,
}

impl Scope {
    pub fn enter(&mut self) {
        self.blocks.push(Vec::new());
        self.narrowed.push(Vec::new());
    }

    pub fn leave(&mut self) {
        self.blocks.pop();
        self.narrowed.pop();
    }

    /// Declares a local in the current block. Its data was made where it is declared, or,
    /// for a reference, under `origin` callbacks and loops (see `Local::iteration`).
    pub fn declare(&mut self, name: &str, ty: Ty, holds: Holds, mutable: bool, origin: Option<usize>) -> Ident {
        let rust = format_ident!("l_{}", name);
        let local = Local {
            name: name.to_string(),
            rust: rust.clone(),
            ty,
            holds,
            mutable,
            function: self.current_function(),
            loop_depth: self.loops,
            iteration: origin.unwrap_or(self.elements.len()),
        };
        self.blocks.last_mut().expect("a block is open").push(local);
        rust
    }

    pub fn lookup(&self, name: &str) -> Option<&Local> {
        self.blocks
            .iter()
            .rev()
            .flat_map(|b| b.iter().rev())
            .find(|l| l.name == name)
    }

    /// Narrows `path` (an optional) to present, until the current block ends.
    pub fn narrow(&mut self, path: String) {
        self.narrowed.last_mut().expect("a block is open").push(path);
    }

    pub fn is_narrowed(&self, path: &str) -> bool {
        self.narrowed.iter().flatten().any(|p| p == path)
    }

    pub fn function(&self) -> &Function {
        self.functions.last().expect("inside a function")
    }

    pub fn function_mut(&mut self) -> &mut Function {
        self.functions.last_mut().expect("inside a function")
    }

    /// The innermost callback's or loop's element, when inside one.
    pub fn iteration_element(&self) -> Option<&str> {
        self.elements.last().map(String::as_str)
    }

    pub fn current_function(&self) -> usize {
        self.functions.len().saturating_sub(1)
    }

    pub fn in_run(&self) -> bool {
        self.functions.iter().any(|f| f.kind == FunctionKind::Run)
    }

    /// Whether a JavaScript name is also a Rust one (after the `l_` prefix).
    pub fn valid_name(name: &str) -> bool {
        let mut chars = name.chars();
        chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    }
}
