//! Task types that know their id and report their drop to the
//! [`drop_log`](crate::drop_log).
//!
//! The deque copies tasks word by word (`buffer.rs`), so the harnesses use
//! several sizes: one word, a size that ends in a partial word, a heap
//! pointer (a duplicated task is then a double free that AddressSanitizer
//! reports even before the drop log does), and zero-sized (no memory at all,
//! and a growable worker that starts at the largest capacity).

use std::fmt::Debug;

use crate::drop_log;

/// A task whose identity survives a trip through the deque.
pub trait TrackedTask: Send + 'static {
    /// Makes the task numbered `id`.
    fn new(id: u64) -> Self;

    /// The task's id, or `None` if the type is too small to carry one.
    /// Panics if the bytes are not those of a task made by `new`.
    fn id(&self) -> Option<u64>;
}

/// Which task type an input runs with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, arbitrary::Arbitrary)]
pub enum TaskKind {
    /// [`WordTask`]: 8 bytes.
    Word,
    /// [`OddSizedTask`]: 11 bytes, the last slot word half used.
    OddSized,
    /// [`BoxedTask`]: owns a heap allocation.
    Boxed,
    /// [`ZeroSizedTask`]: no bytes at all.
    ZeroSized,
}

/// One 64-bit word: the id.
#[derive(Debug)]
pub struct WordTask {
    id: u64,
}

impl TrackedTask for WordTask {
    fn new(id: u64) -> Self {
        WordTask { id }
    }

    fn id(&self) -> Option<u64> {
        Some(self.id)
    }
}

impl Drop for WordTask {
    fn drop(&mut self) {
        drop_log::record(Some(self.id));
    }
}

/// Eleven bytes with no padding: the id, then three check bytes derived from
/// it, so that a slot copied with its last partial word wrong is detected.
#[derive(Debug)]
pub struct OddSizedTask {
    bytes: [u8; 11],
}

impl OddSizedTask {
    fn check_bytes(id: u64) -> [u8; 3] {
        let mixed = id.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17) ^ 0xa5;
        let bytes = mixed.to_le_bytes();
        [bytes[0], bytes[3], bytes[7]]
    }
}

impl TrackedTask for OddSizedTask {
    fn new(id: u64) -> Self {
        let mut bytes = [0u8; 11];
        bytes[..8].copy_from_slice(&id.to_le_bytes());
        bytes[8..].copy_from_slice(&Self::check_bytes(id));
        OddSizedTask { bytes }
    }

    fn id(&self) -> Option<u64> {
        let id = u64::from_le_bytes(self.bytes[..8].try_into().expect("eight bytes"));
        assert_eq!(
            self.bytes[8..],
            Self::check_bytes(id),
            "task {id}: its last three bytes were corrupted in the deque"
        );
        Some(id)
    }
}

impl Drop for OddSizedTask {
    fn drop(&mut self) {
        drop_log::record(self.id());
    }
}

/// A pointer to a heap-allocated id.
#[derive(Debug)]
pub struct BoxedTask {
    id: Box<u64>,
}

impl TrackedTask for BoxedTask {
    fn new(id: u64) -> Self {
        BoxedTask { id: Box::new(id) }
    }

    fn id(&self) -> Option<u64> {
        Some(*self.id)
    }
}

impl Drop for BoxedTask {
    fn drop(&mut self) {
        drop_log::record(Some(*self.id));
    }
}

/// No bytes: the deque stores nothing, only counts.
#[derive(Debug)]
pub struct ZeroSizedTask;

impl TrackedTask for ZeroSizedTask {
    fn new(_id: u64) -> Self {
        ZeroSizedTask
    }

    fn id(&self) -> Option<u64> {
        None
    }
}

impl Drop for ZeroSizedTask {
    fn drop(&mut self) {
        drop_log::record(None);
    }
}

/// The id a task of type `T` made with `new(id)` reports.
pub fn expected_id<T: TrackedTask>(id: u64) -> Option<u64> {
    if std::mem::size_of::<T>() == 0 {
        None
    } else {
        Some(id)
    }
}

/// Asserts that `task` is the task `id` (for zero-sized tasks, any task).
pub fn assert_is<T: TrackedTask + Debug>(task: &T, id: u64, context: &dyn Debug) {
    assert_eq!(
        task.id(),
        expected_id::<T>(id),
        "{context:?}: got the wrong task"
    );
}
