//! The memory allocator of generated servers.
//!
//! A generated `main.rs` installs it (`#[global_allocator]`): svc owns the binary, so it
//! chooses what a server is best served by, as it does the runtime and the profiles.
//!
//! Why mimalloc rather than glibc's `malloc`: a request of the benchmarked route makes
//! about 33 allocations (header maps, the boxed route future, body and JSON buffers,
//! the node's strings), and glibc spends about 190 instructions on each allocation and
//! its free, more for blocks above its 1 KiB thread cache (a route's future, a response
//! header map with room for a protection chain's headers). mimalloc's thread-local free
//! lists take the request from 45,700 to 42,200 instructions (callgrind,
//! `bench/instructions.py`), for about 0.4 MiB more anonymous memory at rest.
//!
//! Built as mimalloc 2 without transparent huge pages (`v2`, `no_thp`): on a kernel
//! with THP always on, mimalloc 3 (the crate's default) raised the idle resident memory
//! from 5.4 to 11.7 MiB; mimalloc 2 without huge pages adds about 0.45 MiB. mimalloc's
//! own environment options (`MIMALLOC_*`) apply.

/// The allocator a generated server installs; a unit value, so `main.rs` writes
/// `static ALLOCATOR: ServerAllocator = ServerAllocator;`.
pub use mimalloc::MiMalloc as ServerAllocator;
