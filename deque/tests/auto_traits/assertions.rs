// The auto traits and the std trait impls of every public type of
// crossbeam-deque 0.8 (`Worker`, `Stealer`, `Injector`, `Steal`), for task
// types that differ in each auto trait, written against crossbeam-deque's
// names under the alias `deque_crate`. It is `include!`d twice: by
// deque/tests/auto_traits.rs with `use chase_lev as deque_crate;`, and by
// the repository's tests/crossbeam-compat/tests/auto_traits.rs with
// `use crossbeam_deque as deque_crate;`, which runs in the packages
// crossbeam-compat (chase-lev renamed `crossbeam-deque`) and
// crossbeam-compat-reference (the real crossbeam-deque). Every line is an
// assertion that fails to compile on the crate that differs, so the two
// crates implement the same list: each `assert_impl_all!` says a trait is
// implemented, each `assert_not_impl_any!` that it is not.
//
// Not listed: `Drop` (not a usable bound), and the traits no public type of
// either crate implements beyond those asserted absent below.

use deque_crate::{Injector, Steal, Stealer, Worker};
use static_assertions::{assert_impl_all, assert_not_impl_any};
use std::cell::Cell;
use std::fmt::Debug;
use std::hash::Hash;
use std::marker::{PhantomData, PhantomPinned};
use std::panic::{RefUnwindSafe, UnwindSafe};

// The task types are used only inside the assertions' `const _` items,
// which rustc 1.82 (the crate's minimum) does not count as uses: it would
// report each type as never used (later releases do not).

/// A plain task: every auto trait.
#[allow(dead_code)]
type Plain = u32;
/// `Send` but not `Sync`, and `UnwindSafe` but not `RefUnwindSafe`
/// (interior mutability).
#[allow(dead_code)]
type SendOnly = Cell<u32>;
/// Neither `Send` nor `Sync` (a raw pointer inside); both unwind traits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(dead_code)]
struct ThreadBound(*const u32);
/// `Send` and `Sync`, `RefUnwindSafe` but not `UnwindSafe` (a `&mut`).
#[allow(dead_code)]
struct NotUnwindSafe(PhantomData<&'static mut u32>);
/// Every auto trait but `Unpin`.
#[allow(dead_code)]
struct Pinned(PhantomPinned);
/// Every auto trait, and no other trait: not `Clone`, `Debug`, `PartialEq`.
#[allow(dead_code)]
struct Bare;

// The task types are what their comments say.
assert_impl_all!(Plain: Send, Sync, Unpin, UnwindSafe, RefUnwindSafe);
assert_impl_all!(SendOnly: Send, Unpin, UnwindSafe);
assert_not_impl_any!(SendOnly: Sync, RefUnwindSafe);
assert_impl_all!(ThreadBound: Unpin, UnwindSafe, RefUnwindSafe);
assert_not_impl_any!(ThreadBound: Send, Sync);
assert_impl_all!(NotUnwindSafe: Send, Sync, Unpin, RefUnwindSafe);
assert_not_impl_any!(NotUnwindSafe: UnwindSafe);
assert_impl_all!(Pinned: Send, Sync, UnwindSafe, RefUnwindSafe);
assert_not_impl_any!(Pinned: Unpin);
assert_not_impl_any!(Bare: Clone, Debug, PartialEq, Default);

// `Worker`: the owner's handle moves between threads with its tasks (`Send`
// when `T: Send`) and is never shared (`Sync` never: its operations assume
// one thread). `UnwindSafe` when `T: RefUnwindSafe`, never `RefUnwindSafe`:
// a `&Worker` carries the owner's unsynchronised state. Always `Unpin`.
// `Debug` for every `T`; not `Clone` (there is one owner), not `Default`.
assert_impl_all!(Worker<Plain>: Send, Unpin, UnwindSafe, Debug);
assert_not_impl_any!(Worker<Plain>: Sync, RefUnwindSafe);
assert_impl_all!(Worker<SendOnly>: Send, Unpin, Debug);
assert_not_impl_any!(Worker<SendOnly>: Sync, UnwindSafe, RefUnwindSafe);
assert_impl_all!(Worker<ThreadBound>: Unpin, UnwindSafe, Debug);
assert_not_impl_any!(Worker<ThreadBound>: Send, Sync, RefUnwindSafe);
assert_impl_all!(Worker<NotUnwindSafe>: Send, Unpin, UnwindSafe);
assert_not_impl_any!(Worker<NotUnwindSafe>: Sync, RefUnwindSafe);
assert_impl_all!(Worker<Pinned>: Send, Unpin, UnwindSafe);
assert_not_impl_any!(Worker<Pinned>: Sync, RefUnwindSafe);
assert_impl_all!(Worker<Bare>: Send, Unpin, UnwindSafe, Debug);
assert_not_impl_any!(Worker<Plain>: Clone, Copy, Default, PartialEq, Hash);

// `Stealer`: shared and sent freely when `T: Send` (tasks are moved, never
// shared, so `T: Sync` is not needed); both unwind traits when
// `T: RefUnwindSafe`; always `Unpin`, `Clone` and `Debug`.
assert_impl_all!(Stealer<Plain>: Send, Sync, Unpin, UnwindSafe, RefUnwindSafe, Clone, Debug);
assert_impl_all!(Stealer<SendOnly>: Send, Sync, Unpin, Clone, Debug);
assert_not_impl_any!(Stealer<SendOnly>: UnwindSafe, RefUnwindSafe);
assert_impl_all!(Stealer<ThreadBound>: Unpin, UnwindSafe, RefUnwindSafe, Clone, Debug);
assert_not_impl_any!(Stealer<ThreadBound>: Send, Sync);
assert_impl_all!(Stealer<NotUnwindSafe>: Send, Sync, Unpin, UnwindSafe, RefUnwindSafe);
assert_impl_all!(Stealer<Pinned>: Send, Sync, Unpin, UnwindSafe, RefUnwindSafe);
assert_impl_all!(Stealer<Bare>: Send, Sync, Unpin, UnwindSafe, RefUnwindSafe, Clone, Debug);
assert_not_impl_any!(Stealer<Plain>: Copy, Default, PartialEq, Hash);

// `Injector`: shared and sent when `T: Send`; `RefUnwindSafe` when
// `T: RefUnwindSafe` but never `UnwindSafe` (crossbeam-deque's as it comes
// out of its fields; a shared `&Injector` or an `Arc<Injector>` is
// `UnwindSafe`); `Unpin` when `T: Unpin` (it owns its tasks); always
// `Default` and `Debug`.
assert_impl_all!(Injector<Plain>: Send, Sync, Unpin, RefUnwindSafe, Default, Debug);
assert_not_impl_any!(Injector<Plain>: UnwindSafe);
assert_impl_all!(Injector<SendOnly>: Send, Sync, Unpin, Default, Debug);
assert_not_impl_any!(Injector<SendOnly>: UnwindSafe, RefUnwindSafe);
assert_impl_all!(Injector<ThreadBound>: Unpin, RefUnwindSafe, Default, Debug);
assert_not_impl_any!(Injector<ThreadBound>: Send, Sync, UnwindSafe);
assert_impl_all!(Injector<NotUnwindSafe>: Send, Sync, Unpin, RefUnwindSafe);
assert_not_impl_any!(Injector<NotUnwindSafe>: UnwindSafe);
assert_impl_all!(Injector<Pinned>: Send, Sync, RefUnwindSafe);
assert_not_impl_any!(Injector<Pinned>: Unpin, UnwindSafe);
assert_impl_all!(Injector<Bare>: Send, Sync, Unpin, RefUnwindSafe, Default, Debug);
assert_not_impl_any!(Injector<Plain>: Clone, Copy, PartialEq, Hash);
assert_impl_all!(&Injector<Plain>: UnwindSafe);
assert_impl_all!(std::sync::Arc<Injector<Plain>>: UnwindSafe);

// `Steal`: a plain enum, every auto trait exactly when `T` has it; `Debug`
// for every `T` (it prints no task); `Clone`, `Copy`, `PartialEq`, `Eq`
// when `T` has them; collects from an iterator of `Steal`s.
assert_impl_all!(Steal<Plain>: Send, Sync, Unpin, UnwindSafe, RefUnwindSafe);
assert_impl_all!(Steal<Plain>: Debug, Clone, Copy, PartialEq, Eq, FromIterator<Steal<Plain>>);
assert_impl_all!(Steal<SendOnly>: Send, Unpin, UnwindSafe, Debug, Clone, PartialEq, Eq);
assert_not_impl_any!(Steal<SendOnly>: Sync, RefUnwindSafe, Copy);
assert_impl_all!(Steal<ThreadBound>: Unpin, UnwindSafe, RefUnwindSafe, Debug, Copy);
assert_not_impl_any!(Steal<ThreadBound>: Send, Sync);
assert_impl_all!(Steal<NotUnwindSafe>: Send, Sync, Unpin, RefUnwindSafe, Debug);
assert_not_impl_any!(Steal<NotUnwindSafe>: UnwindSafe);
assert_impl_all!(Steal<Pinned>: Send, Sync, UnwindSafe, RefUnwindSafe, Debug);
assert_not_impl_any!(Steal<Pinned>: Unpin);
assert_impl_all!(Steal<Bare>: Send, Sync, Unpin, UnwindSafe, RefUnwindSafe, Debug);
assert_impl_all!(Steal<Bare>: FromIterator<Steal<Bare>>);
assert_not_impl_any!(Steal<Bare>: Clone, Copy, PartialEq);
assert_not_impl_any!(Steal<Plain>: Default, Hash, PartialOrd);

/// What the unwind traits allow: each handle crosses `catch_unwind` as
/// crossbeam-deque's does, and a panic caught there leaves the deque whole
/// for the other handles.
#[test]
fn handles_cross_catch_unwind_and_a_caught_panic_leaves_the_deque_whole() {
    use std::panic::catch_unwind;

    let worker = Worker::new_lifo();
    let stealer = worker.stealer();
    worker.push(1);
    worker.push(2);
    worker.push(3);
    let thief = stealer.clone();
    let stolen = catch_unwind(move || thief.steal()).unwrap();
    assert_eq!(stolen, Steal::Success(1));
    let caught = catch_unwind(|| {
        assert_eq!(stealer.steal(), Steal::Success(2));
        panic!("a task's code panicked after its steal");
    });
    assert!(caught.is_err());
    let worker = catch_unwind(move || {
        assert_eq!(worker.pop(), Some(3));
        worker
    })
    .unwrap();
    assert!(worker.pop().is_none());
    assert_eq!(stealer.steal(), Steal::Empty);

    let injector = Injector::new();
    injector.push(4);
    injector.push(5);
    let caught = catch_unwind(|| {
        assert_eq!(injector.steal(), Steal::Success(4));
        panic!("a task's code panicked after its steal");
    });
    assert!(caught.is_err());
    assert_eq!(injector.steal(), Steal::Success(5));
    assert!(injector.is_empty());
}
