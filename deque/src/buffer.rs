//! The buffer: a power-of-two array of slots holding the indices
//! `[start, start + capacity)` of one *lap*, and never any other.
//!
//! A thief reads its slot *before* the CAS that claims it. In Lê et al.'s
//! ring the owner may by then have wrapped around and be rewriting that slot
//! for the index `capacity` further on, a data race that crossbeam-deque
//! accepts as a deliberate volatile race (unsafe-code-guidelines #531). Here a
//! buffer never wraps: when `bottom` reaches the end of the buffer's lap the
//! owner moves the live tasks into a new buffer (of the same capacity, or
//! double if full) starting at `top`, exactly as it does when it grows.
//! So within one buffer an index owns its slot, and the only rewrite of a
//! slot is the owner re-pushing an index it popped, which the pop's fence
//! keeps apart from any thief's read (proofs-notes/reclamation.md#no-wrap).
//! Slots are therefore plain `UnsafeCell<MaybeUninit<T>>` with no atomics:
//! any `T` works (padding, pointers and all), miri and ThreadSanitizer see no
//! race, and under loom every slot access is checked for causality.

use core::mem::{self, MaybeUninit};

use crate::sync::SlotCell;

/// The largest capacity a buffer may have: indices are `i64` and the distance
/// `bottom - top` must stay representable with room to spare.
pub(crate) const MAX_CAPACITY: usize = 1 << 62;

pub(crate) struct Buffer<T> {
    slots: Box<[SlotCell<T>]>,
    /// `capacity - 1`; the capacity is a power of two.
    mask: usize,
    /// The first index of this buffer's lap.
    start: i64,
    /// One past its last index, saturating at the end of the index space
    /// (where push panics anyway): kept rather than computed, because a
    /// thief checks it at every steal (`covers`).
    end: i64,
}

impl<T> Buffer<T> {
    /// Allocates a buffer of `capacity` slots (a power of two) for the
    /// indices `[start, start + capacity)`. Panics with a clear message when
    /// the size overflows.
    pub(crate) fn new(capacity: usize, start: i64) -> Buffer<T> {
        assert!(
            capacity.is_power_of_two() && capacity <= MAX_CAPACITY,
            "chase-lev: capacity overflow (a buffer of {capacity} slots is not allowed)"
        );
        let fits = capacity
            .checked_mul(mem::size_of::<T>())
            .is_some_and(|bytes| bytes <= isize::MAX as usize);
        assert!(
            fits,
            "chase-lev: capacity overflow ({capacity} slots of {} bytes do not fit in memory)",
            mem::size_of::<T>()
        );
        Buffer {
            slots: SlotCell::new_slots(capacity),
            mask: capacity - 1,
            start,
            end: start.saturating_add(capacity as i64),
        }
    }

    /// Makes this buffer, retired and held by no thread, the buffer of the
    /// lap that starts at `start`: what `new` would give, without the
    /// allocation (proofs-notes/reclamation.md#reuse). The model and mutant
    /// builds zero every slot, as `new` does there: under loom that is a
    /// write of each slot, so a thief still reading one of the old lap's is
    /// reported as it would be for a free.
    ///
    /// # Safety
    /// No other thread reads this buffer until the owner publishes it again.
    pub(crate) unsafe fn restart(&mut self, start: i64) {
        #[cfg(any(chase_lev_loom, chase_lev_mutants))]
        for slot in self.slots.iter() {
            // SAFETY: by the caller, no thread accesses the buffer.
            unsafe { slot.write(MaybeUninit::zeroed()) };
        }
        self.start = start;
        self.end = start.saturating_add(self.capacity() as i64);
    }

    pub(crate) fn capacity(&self) -> usize {
        self.mask + 1
    }

    /// One past the last index of this buffer's lap (saturating at the end
    /// of the index space, where push panics anyway).
    pub(crate) fn end(&self) -> i64 {
        self.end
    }

    /// Whether the slot of `index` belongs to `index` in this buffer.
    pub(crate) fn covers(&self, index: i64) -> bool {
        self.start <= index && index < self.end
    }

    fn slot(&self, index: i64) -> &SlotCell<T> {
        // A mutant that breaks the lap (`steal-without-cas`,
        // `no-reload-after-grow`) trips this check on a thread, and the
        // deque's `Drop` can trip it again while that panic unwinds, which
        // would abort the test process that hunts the mutant: mutant builds
        // check only outside an unwinding.
        debug_assert!(
            self.covers(index) || (cfg!(chase_lev_mutants) && std::thread::panicking()),
            "index {index} outside the buffer's lap"
        );
        let position = index as usize & self.mask;
        // SAFETY: `position <= mask < slots.len()`.
        unsafe { self.slots.get_unchecked(position) }
    }

    /// Writes `task` into the slot of `index`, overwriting without a drop.
    ///
    /// # Safety
    /// The caller owns the slot: no other thread reads or writes it
    /// concurrently (proofs-notes/reclamation.md#no-wrap).
    pub(crate) unsafe fn write(&self, index: i64, task: T) {
        // SAFETY: forwarded from the caller.
        unsafe { self.slot(index).write(MaybeUninit::new(task)) };
        #[cfg(chase_lev_mutants)]
        crate::trace::slot("write", index);
    }

    /// Reads a bitwise copy of the slot of `index`: a valid task only if the
    /// caller then wins the right to it (the owner's pop, or a thief's CAS).
    ///
    /// # Safety
    /// No thread writes the slot concurrently
    /// (proofs-notes/reclamation.md#no-wrap).
    pub(crate) unsafe fn read(&self, index: i64) -> MaybeUninit<T> {
        // SAFETY: forwarded from the caller.
        let task = unsafe { self.slot(index).read() };
        #[cfg(chase_lev_mutants)]
        crate::trace::slot("read", index);
        task
    }

    /// Moves the buffer to the heap, where the deque's pointers find it
    /// (`sync::allocate_buffer`: where a global allocator would run).
    pub(crate) fn allocate(self) -> *mut Buffer<T> {
        crate::sync::allocate_buffer(self)
    }

    /// Frees a retired buffer (under loom: writes every
    /// slot, so that a read of it still to come is a causality violation,
    /// `sync::free_buffer`).
    ///
    /// # Safety
    /// `buffer` came from `Box::into_raw` ([`Buffer::allocate`] or the
    /// deque's first buffer), no thread can still read it, and it is freed
    /// once.
    pub(crate) unsafe fn free(buffer: *mut Buffer<T>) {
        // The event log numbers pointers: an address freed and handed out
        // again is another buffer.
        #[cfg(chase_lev_mutants)]
        if crate::sync::FREE_RETURNS_MEMORY {
            crate::trace::freed(buffer as usize);
        }
        // SAFETY: by the caller.
        unsafe { crate::sync::free_buffer(buffer) }
    }

    /// Frees the deque's buffer at the deque's drop, when no handle is left:
    /// given back to the allocator in every build, the model builds too.
    ///
    /// # Safety
    /// `buffer` came from `Box::into_raw`, and no thread can read it again.
    pub(crate) unsafe fn free_at_the_deques_drop(buffer: *mut Buffer<T>) {
        #[cfg(chase_lev_mutants)]
        crate::trace::freed(buffer as usize);
        // SAFETY: by the caller.
        drop(unsafe { Box::from_raw(buffer) });
    }

    /// Reverses the order of the tasks in the slots of `[from, to)`.
    ///
    /// # Safety
    /// The caller owns those slots, as for `write`.
    pub(crate) unsafe fn reverse(&self, from: i64, to: i64) {
        let (mut low, mut high) = (from, to - 1);
        while low < high {
            // SAFETY: forwarded from the caller; a swap of two owned slots.
            unsafe {
                let task = self.slot(low).read();
                self.slot(low).write(self.slot(high).read());
                self.slot(high).write(task);
            }
            low += 1;
            high -= 1;
        }
    }

    /// Copies the slot of `from` in `source` into the slot of `to` here.
    ///
    /// # Safety
    /// As for `read` on `source` and `write` on `self`.
    pub(crate) unsafe fn copy_slot(&self, source: &Buffer<T>, from: i64, to: i64) {
        // SAFETY: forwarded from the caller.
        unsafe { self.slot(to).write(source.slot(from).read()) };
        #[cfg(chase_lev_mutants)]
        crate::trace::slot("copy", to);
    }
}

impl<T> crate::sync::Slots for Buffer<T> {
    fn write_every_slot_as_freed(&self) {
        for slot in self.slots.iter() {
            slot.mark_freed();
        }
    }
}

#[cfg(all(test, not(any(chase_lev_loom, chase_lev_shuttle))))]
mod tests {
    use super::*;

    fn round_trip<T: Clone + PartialEq + core::fmt::Debug>(value: T) {
        let buffer = Buffer::<T>::new(4, 3);
        for index in 3..7 {
            // SAFETY: single-threaded; the slot is written before it is read.
            let back = unsafe {
                buffer.write(index, value.clone());
                buffer.read(index).assume_init()
            };
            assert_eq!(back, value);
        }
    }

    #[test]
    fn a_task_round_trips_through_a_slot_whatever_its_type() {
        round_trip(7u8);
        round_trip((std::rc::Rc::new(5), true)); // padding and a pointer
        round_trip([1u8, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
        round_trip(u128::MAX / 3);
        round_trip(String::from("owned heap data"));
        round_trip(());
    }

    #[test]
    fn a_buffer_covers_exactly_one_lap() {
        let buffer = Buffer::<u32>::new(8, 16);
        assert!(!buffer.covers(15));
        assert!(buffer.covers(16) && buffer.covers(23));
        assert!(!buffer.covers(24));
        assert_eq!(buffer.end(), 24);
    }

    #[test]
    fn slots_of_a_zero_sized_task_take_no_memory() {
        let buffer = Buffer::<()>::new(MAX_CAPACITY, 0);
        assert_eq!(buffer.capacity(), MAX_CAPACITY);
        assert!(buffer.covers(MAX_CAPACITY as i64 - 1));
    }

    #[test]
    #[should_panic(expected = "capacity overflow")]
    fn a_buffer_too_large_for_memory_panics_with_a_clear_message() {
        let _ = Buffer::<[u64; 4]>::new(MAX_CAPACITY, 0);
    }
}
