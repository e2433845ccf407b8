//! The auto traits (`Send`, `Sync`, `Unpin`, `UnwindSafe`, `RefUnwindSafe`)
//! and the std trait impls of every public type, pinned at compile time, and
//! what they allow at run time.
//!
//! The list is auto_traits/assertions.rs, written against crossbeam-deque
//! 0.8's names: the repository's compatibility packages include the same
//! file against chase-lev renamed and against the real crossbeam-deque
//! (`cargo test -p crossbeam-compat --test auto_traits`, `cargo test -p
//! crossbeam-compat-reference --test auto_traits`), so a trait that one
//! crate implements and the other does not fails to compile on one side.

use chase_lev as deque_crate;

include!("auto_traits/assertions.rs");

/// chase-lev's own panics (here a `push` on a full bounded worker) come
/// before the operation changes the deque: caught, they leave it whole.
#[test]
fn a_caught_panic_of_a_full_bounded_push_leaves_the_deque_whole() {
    use std::panic::{catch_unwind, AssertUnwindSafe};

    let worker = Worker::new_lifo_bounded(2);
    let stealer = worker.stealer();
    worker.push(1);
    worker.push(2);
    let caught = catch_unwind(AssertUnwindSafe(|| worker.push(3)));
    assert!(caught.is_err());
    assert_eq!(worker.len(), 2);
    assert_eq!(stealer.steal(), Steal::Success(1));
    worker.push(4);
    assert_eq!(worker.pop(), Some(4));
    assert_eq!(worker.pop(), Some(2));
    assert_eq!(worker.pop(), None);
}

#[test]
fn a_worker_moved_to_another_thread_keeps_its_tasks_and_its_stealers() {
    use std::thread;

    let worker = Worker::new_lifo();
    let stealer = worker.stealer();
    worker.push(Cell::new(1));
    worker.push(Cell::new(2));
    let worker = thread::spawn(move || {
        assert_eq!(worker.pop().map(Cell::into_inner), Some(2));
        worker
    })
    .join()
    .unwrap();
    let shared = &stealer;
    let stolen = thread::scope(|scope| {
        scope
            .spawn(move || shared.steal().success())
            .join()
            .unwrap()
    });
    assert_eq!(stolen.map(Cell::into_inner), Some(1));
    assert!(worker.is_empty());
}
