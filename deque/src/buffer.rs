//! The ring buffer: a power-of-two array of slots, each slot a run of 64-bit
//! atomic words that holds the bytes of one task.
//!
//! A thief reads its slot *before* the CAS that claims it, and by then the
//! owner may have wrapped around and be writing the same slot. crossbeam-deque
//! lets those two accesses race (a volatile read; unsafe-code-guidelines #531).
//! Here both sides copy the task word by word with relaxed atomic loads and
//! stores, so the race is an atomic race, which the memory model defines: the
//! loser of the CAS just discards the bytes it read. Miri and ThreadSanitizer
//! see no data race.
//!
//! The words are `AtomicPtr<()>`, not `AtomicU64`: a pointer copied through
//! an integer loses its provenance (miri rejects the task's later use), while
//! a pointer-typed copy keeps it, and integer bytes copied at pointer type
//! come back as the same integers.
//!
//! Limitation: a task type with padding bytes would move uninitialised bytes
//! through a word, which Rust's current rules call undefined (RFC 3301's
//! per-byte atomic memcpy would fix this). Every task type a scheduler uses
//! in practice (`Box<dyn FnOnce()>`, `Arc`, raw task pointers, integers) has
//! no padding. See proofs-notes/limits.md.

use core::mem::{self, ManuallyDrop, MaybeUninit};
use core::ptr;

use crate::sync::{zeroed_words, AtomicWord, Ordering::Relaxed, Word};

const WORD: usize = mem::size_of::<Word>();

/// How many words one slot of `T` takes (zero for a zero-sized `T`).
#[inline(always)]
pub(crate) const fn words_per_slot<T>() -> usize {
    mem::size_of::<T>().div_ceil(WORD)
}

/// The largest capacity a buffer may have: indices are `i64` and the distance
/// `bottom - top` must stay representable with room to spare.
pub(crate) const MAX_CAPACITY: usize = 1 << 62;

pub(crate) struct Buffer {
    words: Box<[AtomicWord]>,
    /// `capacity - 1`; the capacity is a power of two.
    mask: usize,
}

impl Buffer {
    /// Allocates a buffer of `capacity` slots (a power of two) for tasks of
    /// type `T`. Panics with a clear message when the size overflows.
    pub(crate) fn new<T>(capacity: usize) -> Buffer {
        assert!(
            capacity.is_power_of_two() && capacity <= MAX_CAPACITY,
            "chase-lev: capacity overflow (a buffer of {capacity} slots is not allowed)"
        );
        let len = capacity
            .checked_mul(words_per_slot::<T>())
            .filter(|words| words.checked_mul(WORD).is_some_and(|b| b <= isize::MAX as usize))
            .unwrap_or_else(|| {
                panic!(
                    "chase-lev: capacity overflow ({capacity} slots of {} bytes do not fit in memory)",
                    mem::size_of::<T>()
                )
            });
        Buffer {
            words: zeroed_words(len),
            mask: capacity - 1,
        }
    }

    #[inline(always)]
    pub(crate) fn capacity(&self) -> usize {
        self.mask + 1
    }

    #[inline(always)]
    fn slot<T>(&self, index: i64) -> &[AtomicWord] {
        let words = words_per_slot::<T>();
        let start = (index as usize & self.mask) * words;
        debug_assert!(start + words <= self.words.len());
        // SAFETY: `index & mask < capacity`, and `new` allocated exactly
        // `capacity * words_per_slot::<T>()` words for this same `T`, so
        // `start + words <= self.words.len()`. Unchecked because the bounds
        // check cost three instructions in every push, pop and steal
        // (deque/benches/callgrind.sh).
        unsafe { self.words.get_unchecked(start..start + words) }
    }

    /// Writes `task` into the slot of `index`. The slot's previous content is
    /// overwritten without being dropped: the caller owns that slot.
    #[inline]
    pub(crate) fn write<T>(&self, index: i64, task: T) {
        let task = ManuallyDrop::new(task);
        let source = (&*task as *const T).cast::<u8>();
        for (word_index, word) in self.slot::<T>(index).iter().enumerate() {
            // SAFETY: `source` points to `size_of::<T>()` readable bytes and
            // `read_word` reads only those.
            let value = unsafe { read_word::<T>(source, word_index) };
            // Ordering: Relaxed. The slot's bytes are published by the
            // release fence in push (proofs-notes/model.md#message-passing).
            word.store(value, Relaxed);
        }
    }

    /// Reads the bytes of the slot of `index`. The result is a bitwise copy:
    /// it is a valid task only if the caller then wins the right to it (the
    /// owner's pop, or a thief's successful CAS).
    #[inline]
    pub(crate) fn read<T>(&self, index: i64) -> MaybeUninit<T> {
        let mut task = MaybeUninit::<T>::uninit();
        let target = task.as_mut_ptr().cast::<u8>();
        for (word_index, word) in self.slot::<T>(index).iter().enumerate() {
            // Ordering: Relaxed. The thief's acquire load of bottom (or the
            // owner's own program order) makes the write visible
            // (proofs-notes/model.md#message-passing).
            let value = word.load(Relaxed);
            // SAFETY: `target` points to `size_of::<T>()` writable bytes and
            // `write_word` writes only those.
            unsafe { write_word::<T>(target, word_index, value) };
        }
        task
    }

    /// Copies the slot of `index` in `source` to the slot of the same index
    /// in `self` (used when the owner grows or shrinks the buffer).
    pub(crate) fn copy_slot<T>(&self, source: &Buffer, index: i64) {
        self.copy_slot_to::<T>(source, index, index);
    }

    /// Copies the slot of `from` in `source` to the slot of `to` in `self`
    /// without materialising a `T` (used by batch steals).
    #[inline]
    pub(crate) fn copy_slot_to<T>(&self, source: &Buffer, from: i64, to: i64) {
        for (target, word) in self.slot::<T>(to).iter().zip(source.slot::<T>(from)) {
            // Ordering: Relaxed, as in `read` and `write`; the copy is
            // published by the destination's own release fence
            // (proofs-notes/model.md#message-passing).
            target.store(word.load(Relaxed), Relaxed);
        }
    }
}

/// Reads word `word_index` of the `size_of::<T>()` bytes at `source`, at
/// pointer type so that a pointer keeps its provenance; a final partial word
/// (never part of a pointer) is zero-extended.
///
/// # Safety
/// `source` is valid for reads of `size_of::<T>()` bytes.
#[inline(always)]
unsafe fn read_word<T>(source: *const u8, word_index: usize) -> Word {
    let offset = word_index * WORD;
    let remaining = mem::size_of::<T>() - offset;
    if remaining >= WORD {
        // SAFETY: bytes [offset, offset + WORD) are inside the task.
        unsafe { ptr::read_unaligned(source.add(offset).cast::<Word>()) }
    } else {
        let mut bytes = [0u8; WORD];
        // SAFETY: bytes [offset, offset + remaining) are inside the task.
        unsafe { ptr::copy_nonoverlapping(source.add(offset), bytes.as_mut_ptr(), remaining) };
        ptr::without_provenance_mut(usize::from_ne_bytes(bytes))
    }
}

/// Writes `value` as word `word_index` of the `size_of::<T>()` bytes at
/// `target`; of a final partial word only the task's bytes are written.
///
/// # Safety
/// `target` is valid for writes of `size_of::<T>()` bytes.
#[inline(always)]
unsafe fn write_word<T>(target: *mut u8, word_index: usize, value: Word) {
    let offset = word_index * WORD;
    let remaining = mem::size_of::<T>() - offset;
    if remaining >= WORD {
        // SAFETY: bytes [offset, offset + WORD) are inside the task.
        unsafe { ptr::write_unaligned(target.add(offset).cast::<Word>(), value) }
    } else {
        let bytes = value.addr().to_ne_bytes();
        // SAFETY: bytes [offset, offset + remaining) are inside the task.
        unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), target.add(offset), remaining) };
    }
}

#[cfg(all(test, not(chase_lev_loom)))]
mod tests {
    use super::*;

    fn round_trip<T: Clone + PartialEq + core::fmt::Debug>(value: T) {
        let buffer = Buffer::new::<T>(4);
        for index in 0..9 {
            buffer.write(index, value.clone());
            // SAFETY: the slot was just written with a valid `T`.
            let back = unsafe { buffer.read::<T>(index).assume_init() };
            assert_eq!(back, value);
        }
    }

    #[test]
    fn a_task_round_trips_through_a_slot_whatever_its_size() {
        round_trip(7u8);
        round_trip(0xdead_beef_u32);
        round_trip(u64::MAX - 3);
        round_trip([1u8, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
        round_trip(u128::MAX / 3);
        round_trip(String::from("owned heap data"));
        round_trip(());
    }

    #[test]
    fn slots_of_a_zero_sized_task_take_no_memory() {
        let buffer = Buffer::new::<()>(MAX_CAPACITY);
        assert_eq!(buffer.words.len(), 0);
        assert_eq!(buffer.capacity(), MAX_CAPACITY);
    }

    #[test]
    #[should_panic(expected = "capacity overflow")]
    fn a_buffer_too_large_for_memory_panics_with_a_clear_message() {
        let _ = Buffer::new::<[u64; 4]>(MAX_CAPACITY);
    }
}
