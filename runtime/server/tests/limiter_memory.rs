//! Memory of the in-memory rate limiter under 1,000,000 distinct keys, measured with a
//! counting allocator (this test binary's global allocator).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::Duration;
use svc_runtime::ratelimit::{LimitKey, MemoryStore, Quota};

struct Counting;

static ALLOCATED: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATED.fetch_add(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        ALLOCATED.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATED.fetch_add(new_size as isize - layout.size() as isize, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocated() -> isize {
    ALLOCATED.load(Ordering::Relaxed)
}

fn ip_key(i: u32) -> LimitKey<'static> {
    LimitKey::Ip(std::net::IpAddr::V4(std::net::Ipv4Addr::from(i)))
}

// One test function: the allocator is global, so measurements must not overlap.
#[test]
fn memory_per_key_and_bounds() {
    let quota = Quota::per(10, Duration::from_secs(3600));

    // 1,000,000 tracked keys.
    let before = allocated();
    let store = MemoryStore::default();
    for i in 0..1_000_000u32 {
        let d = store.check_now(store.hash(&ip_key(i)), &quota, 1);
        assert!(d.allowed);
    }
    assert_eq!(store.len(), 1_000_000);
    let per_key = (allocated() - before) as f64 / 1_000_000.0;
    println!("bytes per tracked key at 1,000,000 keys: {per_key:.1}");
    assert!(per_key < 48.0, "{per_key} bytes per key");

    // Idle keys are evicted and their memory returned.
    store.sweep_all(u64::MAX / 2);
    assert_eq!(store.len(), 0);
    let after_sweep = allocated() - before;
    println!("bytes after evicting every idle key: {after_sweep}");
    assert!(after_sweep < 1_000_000, "{after_sweep} bytes left after eviction");
    drop(store);

    // A flood of 1,000,000 distinct keys against a cap of 100,000 stays bounded, and
    // refuses none of them (each new key evicts the entry closest to restored).
    let before = allocated();
    let capped = MemoryStore::with_max_keys(100_000);
    let mut rejected = 0u32;
    for i in 0..1_000_000u32 {
        if !capped.check_now(capped.hash(&ip_key(i)), &quota, 1).allowed {
            rejected += 1;
        }
    }
    let used = (allocated() - before) as f64;
    println!(
        "capped at 100,000 keys: {} tracked, {rejected} keys refused, {:.1} MB",
        capped.len(),
        used / 1e6
    );
    assert!(capped.len() <= 100_000 + 64);
    assert_eq!(rejected, 0, "a full store makes room for new clients");
    assert!(used < 100_000.0 * 48.0 * 1.5, "{used} bytes for a cap of 100,000 keys");
}
