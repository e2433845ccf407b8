//! The auto traits promised by the API, pinned at compile time, and what they
//! allow at run time.

use std::cell::Cell;
use std::rc::Rc;
use std::thread;

use chase_lev::{Injector, Steal, Stealer, Worker};
use static_assertions::{assert_impl_all, assert_not_impl_any};

// The owner handle moves between threads but is never shared.
assert_impl_all!(Worker<u32>: Send);
assert_not_impl_any!(Worker<u32>: Sync);
// Thieves clone and share their handle freely, even for tasks that are
// `Send` but not `Sync` (tasks are moved, never shared).
assert_impl_all!(Stealer<u32>: Send, Sync, Clone);
assert_impl_all!(Stealer<Cell<u32>>: Send, Sync, Clone);
assert_impl_all!(Worker<Cell<u32>>: Send);
// A task that cannot cross threads makes neither handle cross threads.
assert_not_impl_any!(Worker<Rc<u32>>: Send, Sync);
assert_not_impl_any!(Stealer<Rc<u32>>: Send, Sync);
// The injector is shared by every thread, for tasks that are `Send` only
// too; never for tasks that cannot cross threads.
assert_impl_all!(Injector<u32>: Send, Sync, Default, std::fmt::Debug);
assert_impl_all!(Injector<Cell<u32>>: Send, Sync);
assert_not_impl_any!(Injector<Rc<u32>>: Send, Sync);
// `Steal` is a plain value.
assert_impl_all!(Steal<u32>: Send, Sync, Copy, Eq, std::fmt::Debug);

#[test]
fn a_worker_moved_to_another_thread_keeps_its_tasks_and_its_stealers() {
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
