//! The vocabulary every part of svc shares.
//!
//! The SDK builds pins and assets with it, the macros and the compiler parse node
//! definitions into it, and generated servers are emitted from it. Keeping one
//! definition of "what a type string means" and "what a valid name is" is what lets
//! the compiler promise that what it checked is what rustc later compiles.
//!
//! This crate has no heavy dependencies on purpose: it is linked into every node crate.

pub mod assets;
pub mod builtin_nodes;
pub mod case;
pub mod constraints;
pub mod manifest;
pub mod names;
pub mod origin;
pub mod type_ref;

pub use assets::{Asset, Assets, EnumDefinition, EnumValue, FieldDefinition, SecretDefinition, StructureDefinition};
pub use constraints::{Constraints, Format};
pub use manifest::{NodeManifest, PinDefinition, PinKind, PinMap};
pub use type_ref::{TypeParseError, TypeRef};

/// Why something a person wrote (a name, a type, an origin) was refused: what is wrong,
/// and what to write instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    pub message: String,
    pub hint: String,
}

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Invalid {}
