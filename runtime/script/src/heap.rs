//! The engine's memory limit, enforced where QuickJS allocates, so that every refusal is
//! seen.
//!
//! QuickJS's own limit (`JS_SetMemoryLimit`) refuses an allocation silently: the engine
//! then throws an "out of memory" error, or, when the heap is so full that even that error
//! cannot be made, `null`. A node that filled its heap with small values therefore looked
//! like a node that threw `null`, and one that caught the error carried on with a heap
//! the engine had given up on. Here the runtime allocates through [`MeteredAllocator`],
//! which holds the budget itself and raises a flag ([`Refusals`]) on the first allocation
//! it refuses: the engine reads the flag after each call and answers `node_memory_limit`
//! whatever the code made of the failure (docs/runtime.md).
//!
//! The `unsafe` of this module is the `Allocator` contract: every block is made and
//! released by rquickjs's `RustAllocator` (the process's global allocator), whose size
//! header this type only reads through `usable_size`.

use rquickjs::allocator::{Allocator, RustAllocator};
use std::cell::Cell;
use std::rc::Rc;

/// Whether the allocator refused an allocation since the flag was last cleared, and what
/// the heap holds: shared by the allocator and the engine, which also reads it before a
/// `fetch` body enters the heap.
#[derive(Clone, Default)]
pub struct Refusals {
    refused: Rc<Cell<bool>>,
    used: Rc<Cell<usize>>,
    budget: Rc<Cell<usize>>,
}

impl Refusals {
    /// Clears the flag (before a call) and says whether it was raised.
    pub fn take(&self) -> bool {
        self.refused.replace(false)
    }

    /// The bytes the heap may still take.
    pub fn headroom(&self) -> usize {
        self.budget.get().saturating_sub(self.used.get())
    }

    /// Counts as a refusal what the engine would have to hold beyond the budget (a
    /// `fetch` body larger than the heap's headroom): the call ends at the memory limit.
    pub fn refuse(&self) {
        self.refused.set(true);
    }
}

/// The allocator of one engine runtime: the global allocator, within `budget` bytes.
pub struct MeteredAllocator {
    budget: usize,
    used: usize,
    refusals: Refusals,
}

impl MeteredAllocator {
    pub fn new(budget: usize, refusals: Refusals) -> Self {
        refusals.budget.set(budget);
        refusals.used.set(0);
        MeteredAllocator {
            budget,
            used: 0,
            refusals,
        }
    }

    /// Whether `more` bytes fit the budget; raises the flag when they do not.
    fn admits(&mut self, more: usize) -> bool {
        let fits = self.used.checked_add(more).is_some_and(|total| total <= self.budget);
        if !fits {
            self.refusals.refused.set(true);
        }
        fits
    }

    fn count(&mut self, ptr: *mut u8) -> *mut u8 {
        if !ptr.is_null() {
            // SAFETY: `ptr` was just returned by `RustAllocator`.
            self.used += unsafe { RustAllocator::usable_size(ptr) };
            self.refusals.used.set(self.used);
        }
        ptr
    }
}

// SAFETY: every pointer handed out comes from `RustAllocator` unchanged, and every
// pointer taken back goes to it unchanged; refusing is returning null, which the
// contract allows.
unsafe impl Allocator for MeteredAllocator {
    fn alloc(&mut self, size: usize) -> *mut u8 {
        if !self.admits(size) {
            return std::ptr::null_mut();
        }
        let ptr = RustAllocator.alloc(size);
        self.count(ptr)
    }

    fn calloc(&mut self, count: usize, size: usize) -> *mut u8 {
        // An overflowing product is refused here: `RustAllocator` would panic on it.
        if !self.admits(count.saturating_mul(size)) {
            return std::ptr::null_mut();
        }
        let ptr = RustAllocator.calloc(count, size);
        self.count(ptr)
    }

    unsafe fn dealloc(&mut self, ptr: *mut u8) {
        // SAFETY: the caller passes a pointer this allocator returned.
        unsafe {
            self.used -= RustAllocator::usable_size(ptr);
            RustAllocator.dealloc(ptr);
        }
        self.refusals.used.set(self.used);
    }

    unsafe fn realloc(&mut self, ptr: *mut u8, new_size: usize) -> *mut u8 {
        if ptr.is_null() {
            return self.alloc(new_size);
        }
        // SAFETY: the caller passes a pointer this allocator returned.
        let old = unsafe { RustAllocator::usable_size(ptr) };
        if new_size > old && !self.admits(new_size - old) {
            // Refused: the old block stays valid, as with `realloc`.
            return std::ptr::null_mut();
        }
        // SAFETY: as above; on failure the old block is untouched and still counted.
        let moved = unsafe { RustAllocator.realloc(ptr, new_size) };
        if !moved.is_null() {
            self.used -= old;
            self.count(moved);
        }
        self.refusals.used.set(self.used);
        moved
    }

    unsafe fn usable_size(ptr: *mut u8) -> usize {
        // SAFETY: the caller passes a pointer this allocator returned.
        unsafe { RustAllocator::usable_size(ptr) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_is_kept_and_a_refusal_is_flagged_once_per_take() {
        let refusals = Refusals::default();
        let mut heap = MeteredAllocator::new(1024, refusals.clone());
        let a = heap.alloc(600);
        assert!(!a.is_null());
        assert!(heap.alloc(600).is_null(), "600 more do not fit 1024");
        assert!(refusals.take());
        assert!(!refusals.take(), "taking clears the flag");
        // Growing in place of a refusal keeps the old block; shrinking always fits.
        let a = unsafe { heap.realloc(a, 100) };
        assert!(!a.is_null());
        let b = heap.calloc(8, 100);
        assert!(!b.is_null(), "800 fit beside 100");
        assert!(unsafe { heap.realloc(b, 2000) }.is_null());
        assert!(refusals.take());
        assert!(heap.calloc(usize::MAX, 2).is_null(), "an overflowing count is refused");
        assert!(refusals.take());
        unsafe {
            heap.dealloc(a);
            heap.dealloc(b);
        }
        assert_eq!(heap.used, 0, "every byte counted in is counted out");
        assert_eq!(refusals.headroom(), 1024, "the engine sees what the allocator counts");
    }
}
