//! svc's runtime and SDK as one shared library, for development.
//!
//! A server `svc build` makes links every crate statically: one file, optimised whole.
//! Linking that binary takes most of a rebuild after a one-line flow change (0.65 s of
//! 1.3 s on a 2-core machine), so the server `svc dev` builds depends on this crate too
//! and names it (`use svc_dylib as _;`): rustc then takes svc's crates, and everything
//! they depend on, from this one `.so` and links only the generated crate and the node
//! crate into the binary (0.1 s). The `.so` is built once, like any dependency, in the
//! shared target directory.
//!
//! The generated code is the same either way; only its linking differs, and
//! `svc test --dev-build` runs a project's flow tests against a server linked this way.
//!
//! The TypeScript engine (svc-script) is not in it: its generic calls, instantiated in the
//! server, reach QuickJS's C functions, which a Rust shared library does not export. A
//! server with TypeScript nodes links the engine itself; the rest comes from here.

pub use svc_runtime;
pub use svc_sdk;
