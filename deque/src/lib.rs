//! A Chase-Lev work-stealing deque with the C11 orderings and fences of
//! Lê, Pop, Cohen and Zappa Nardelli, "Correct and Efficient Work-Stealing
//! for Weak Memory Models" (PPoPP 2013), checked by loom, miri, shuttle, a
//! linearizability checker and fuzzing.
//!
//! One thread owns a [`Worker`]: it pushes and pops tasks at the bottom of
//! the deque with no atomic read-modify-write (only a CAS when it races a
//! thief for the last task). Any number of [`Stealer`]s take the oldest task
//! from the top. The API is that of `crossbeam-deque` 0.8 for `Worker`,
//! `Stealer`, [`Injector`] and [`Steal`], so a scheduler can switch by
//! changing an import,
//! plus bounded workers ([`Worker::new_lifo_bounded`], [`Worker::try_push`])
//! and a starting capacity ([`Worker::new_lifo_with_capacity`]).
//!
//! # Getting it
//!
//! chase-lev is not on crates.io yet, so a release is a commit of its
//! repository, and you pin one. Depend on a clone of the repository by path
//! (the package is its `deque/` folder), or on the repository by `git`:
//!
//! ```toml
//! [dependencies]
//! chase-lev = { path = "path/to/chase-lev/deque" }
//! # or:
//! # chase-lev = { git = "<url of this repository>", package = "chase-lev", rev = "<commit>" }
//! ```
//!
//! `<url of this repository>` is the address you got the repository from
//! (`git remote get-url origin` in a clone prints it); `rev` pins a commit;
//! `package` picks this package out of the repository, which holds several.
//! Everything these docs call "the repository" is in it:
//! `tests/downstream-loom`, `VERIFYING.md`, `proofs-notes/`.
//!
//! The crate needs Rust 1.82 or later, and `std`: each thread that steals
//! keeps a hazard record in thread-local storage, and buffers come from the
//! global allocator.
//!
//! # Compatibility with crossbeam-deque 0.8
//!
//! Every public item of crossbeam-deque 0.8 ([`Worker`], [`Stealer`],
//! [`Injector`], [`Steal`]) is here with the same signature and the same
//! observable behaviour but one, checked by test files that run the same
//! assertions against crossbeam-deque itself and against this crate (the
//! repository's `tests/crossbeam-compat/`). That includes where batch steals
//! put their tasks: the destination's owner pops them in the order the
//! victim's owner would have (oldest first from a FIFO worker or an
//! injector, newest first from a LIFO worker), and `steal_batch_and_pop`
//! returns the first of that order. Each type has crossbeam-deque's auto
//! traits and trait impls, no more and no fewer (`Worker` is `Send` and
//! `UnwindSafe`, `Stealer` `Send`, `Sync`, `UnwindSafe` and
//! `RefUnwindSafe`, under the same bounds on the task type), a list checked
//! at compile time against both crates. A project that uses crossbeam-deque
//! through another crate (rayon) switches with `[patch.crates-io]`, see the
//! README.
//!
//! The one difference: [`Injector::steal`] and the injector's batch steals
//! may return [`Steal::Retry`] where crossbeam-deque's would wait for a push
//! that has claimed a slot but not yet written its task; that task then
//! comes later in the FIFO order (see [`Injector::steal`]). A scheduler that
//! calls again on `Retry`, as crossbeam-deque asks, needs no change.
//!
//! Beyond crossbeam-deque: bounded workers ([`Worker::new_lifo_bounded`],
//! [`Worker::new_fifo_bounded`], [`Worker::try_push`], [`Worker::bound`]), a
//! starting capacity ([`Worker::new_lifo_with_capacity`],
//! [`Worker::new_fifo_with_capacity`]) and [`Worker::capacity`]. A batch
//! steal into a bounded worker takes at most as many tasks as it has room
//! for (as crossbeam's would with that limit). With no room it moves
//! nothing: `steal_batch` returns `Success(())` if the source had a task
//! (the full worker has tasks of its own to pop), and `steal_batch_and_pop`
//! still returns one task. `Empty` always means the source looked empty.
//!
//! # A scheduler loop
//!
//! Each thread pops its own work first, then steals from the others:
//!
//! ```
//! use chase_lev::{Steal, Stealer, Worker};
//! use std::sync::atomic::{AtomicUsize, Ordering};
//! use std::sync::Arc;
//!
//! /// Finds the next task: our own newest first, then the oldest of a victim.
//! fn find_task<T>(local: &Worker<T>, stealers: &[Stealer<T>]) -> Option<T> {
//!     local.pop().or_else(|| loop {
//!         // Collecting `Steal`s keeps the first success, else `Retry` if any
//!         // victim lost a race (try again), else `Empty`.
//!         match stealers.iter().map(|s| s.steal_batch_and_pop(local)).collect() {
//!             Steal::Success(task) => break Some(task),
//!             Steal::Empty => break None,
//!             Steal::Retry => continue,
//!         }
//!     })
//! }
//!
//! let workers: Vec<Worker<u64>> = (0..4).map(|_| Worker::new_lifo()).collect();
//! let stealers: Vec<Stealer<u64>> = workers.iter().map(Worker::stealer).collect();
//! for task in 1..=1000 {
//!     workers[0].push(task); // all the work starts on one thread
//! }
//! let total = Arc::new(AtomicUsize::new(0));
//! std::thread::scope(|scope| {
//!     for local in workers {
//!         let (stealers, total) = (&stealers, &total);
//!         scope.spawn(move || {
//!             while let Some(task) = find_task(&local, stealers) {
//!                 total.fetch_add(task as usize, Ordering::Relaxed);
//!             }
//!         });
//!     }
//! });
//! assert_eq!(total.load(Ordering::Relaxed), 500_500);
//! ```
//!
//! These threads stop at their first look that finds no task, which is
//! right only when all the work is there from the start. A pool that is
//! given work over time puts idle threads to sleep and wakes them for new
//! tasks, and must not lose a wakeup: the package's example `pool`
//! (`examples/pool/`, `cargo run -p chase-lev --example pool`) does it,
//! each step explained, and the repository's `tests/downstream-loom`
//! model-checks it.
//!
//! # Model-checking your scheduler
//!
//! Built with `RUSTFLAGS="--cfg chase_lev_loom"` and the feature `loom`,
//! chase-lev runs on [loom](https://docs.rs/loom)'s atomics, fences, cells
//! and threads (the same algorithm, reclamation and fences as the std build),
//! so a loom test of your scheduler explores the deque inside it too. The cfg
//! is crate-specific (like `crossbeam_loom` and `st3_loom`; a plain `loom`
//! cfg would switch every crate that reads it), and the loom dependency is
//! optional, as crossbeam-utils' is: a crate that does not ask for the
//! feature has no loom in its build or its lock file. Under the cfg,
//! `new_lifo` and `new_fifo` start at 4 slots, so that a model stays small.
//! In your crate's `Cargo.toml`, beside your normal dependency on chase-lev:
//!
//! ```toml
//! [target.'cfg(chase_lev_loom)'.dependencies]
//! # the same `path`, or `git` and `rev`, as your [dependencies] entry:
//! chase-lev = { path = "path/to/chase-lev/deque", features = ["loom"] }
//! loom = "0.7"
//!
//! [lints.rust]
//! unexpected_cfgs = { level = "warn", check-cfg = ["cfg(chase_lev_loom)"] }
//! ```
//!
//! (the lint line declares the cfg, so that rustc does not warn about an
//! unexpected `cfg` in your code), then run
//!
//! ```sh
//! RUSTFLAGS="--cfg chase_lev_loom" cargo test --release --target-dir target/loom
//! ```
//!
//! (a target directory of its own: the flag rebuilds everything). Take your
//! own atomics and threads from loom under the same cfg, and wrap the test
//! in `loom::model`:
//!
//! ```
//! #[cfg(chase_lev_loom)]
//! use loom::{model, thread};
//! #[cfg(not(chase_lev_loom))]
//! use std::thread;
//! #[cfg(not(chase_lev_loom))]
//! fn model(f: impl Fn()) {
//!     f() // one run on real threads
//! }
//!
//! model(|| {
//!     let worker = chase_lev::Worker::new_lifo();
//!     let stealer = worker.stealer();
//!     let thief = thread::spawn(move || stealer.steal().success());
//!     worker.push(1);
//!     let (mine, theirs) = (worker.pop(), thief.join().unwrap());
//!     assert!(mine.is_some() != theirs.is_some(), "task 1 taken exactly once");
//! });
//! ```
//!
//! The repository's `tests/downstream-loom` is a worked example: a
//! two-worker scheduler and the example pool, whose loom tests pass, and
//! catch a planted bug each (a termination counter decremented too early, a
//! lost wakeup).
//!
//! Loom runs the model once per interleaving, and their number explodes
//! with threads and steps. Start with `LOOM_MAX_PREEMPTIONS=2` or `3`: a
//! bound of *n* skips the interleavings in which threads are switched
//! against their will more than *n* times, so a bug that needs more
//! switches goes unseen (the example pool's lost wakeup needs two). Left
//! unset, loom explores every interleaving; `LOOM_MAX_DURATION=<seconds>`
//! caps such a run, which then ends unfinished without a failure. The
//! example pool's model, two workers and two tasks, takes 7,852
//! interleavings at a bound of 2, 302,383 at 3, and more than a million
//! without a bound.
//!
//! # The injector
//!
//! New tasks usually enter a scheduler through a shared FIFO [`Injector`]
//! (crossbeam-deque 0.8's API): any thread pushes, and workers steal one
//! task or a batch into their own deque.
//!
//! ```
//! use chase_lev::{Injector, Steal, Worker};
//!
//! let injector = Injector::new();
//! for task in 1..=10 {
//!     injector.push(task); // from any thread
//! }
//! let local = Worker::new_lifo();
//! // About half of the tasks move, and the local pops return the oldest
//! // first, whatever the worker's flavour.
//! assert_eq!(injector.steal_batch_and_pop(&local), Steal::Success(1));
//! assert_eq!(local.pop(), Some(2));
//! assert_eq!(injector.steal(), Steal::Success(6));
//! ```
//!
//! # What is checked, and where
//!
//! Every atomic operation carries an `// Ordering:` comment naming the proof
//! step in `proofs-notes/` it relies on. The workspace's `model-tests` run
//! loom over owner/thief interleavings and weaken each ordering in turn (the
//! mutation matrix); `tests/linearizability` checks real concurrent histories for
//! linearizability; miri and ThreadSanitizer run the unit and stress tests.
//! The repository's `VERIFYING.md` lists every check, what it shows and how
//! to run it.
//!
//! # Memory
//!
//! The buffer is a ring of slots that doubles when full and halves, with
//! hysteresis, when it stays under a quarter full (over `capacity / 2` owner
//! pops in a row, whether they returned a task or found that thieves had
//! taken them all). Each steal announces the buffer it reads in a hazard
//! slot, with no barrier beyond the steal's own fence. A buffer the owner
//! replaces is freed at that buffer change if no steal holds it, else at a
//! later buffer change after the steal lets go, or when the deque drops (a
//! deque that never changes buffer again keeps it until then: at most one
//! per steal that was in progress). Besides, the owner keeps a few spare
//! buffers of its current capacity for its next laps: two, or one more
//! than the most buffers steals ever held at once. Every thread that steals
//! holds one hazard record while it lives (and one more for each steal
//! nested in another of its steals, such as a steal from inside the global
//! allocator: see [Code that calls back](#code-that-calls-back)); records (128 bytes) are reused by later threads and never
//! freed: the process keeps room for the most threads that held one at
//! once, less than three times that and at least 64. `top` and `bottom`
//! live on separate cache lines. Tasks left in the deque are dropped exactly
//! once when the last handle goes; zero-sized tasks take no memory.
//!
//! # Code that calls back
//!
//! An operation calls code that is not the crate's in a few places: the
//! global allocator (allocating or freeing a buffer, a hazard record chunk
//! or an injector block), the panic hook (a full bounded `push`, a zero
//! batch limit), and a task's `Drop` (only when the last handle of a deque
//! or an injector goes). That code may call **any** operation of the crate
//! on the same thread, on the same deque: an allocator may push onto or pop
//! from the very `Worker` whose push is growing it, steal from it, batch-steal
//! into it, or push to and steal from an injector, and a panic hook may do
//! the same. Every task is still taken exactly once, no memory is freed
//! while in use, and the deque's counts stay exact; an allocator that calls
//! back at every allocation recurses as deep as it makes itself. (Only what
//! Rust itself forbids stays forbidden: a panic inside a global allocator
//! or a panic hook aborts the process.) The repository's
//! `proofs-notes/reclamation.md#reentrant-owner-operations` lists every
//! such point and why each nesting holds; `tests/reentrant_owner.rs` runs
//! each pair of a point and a nested operation, natively and under miri.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs, missing_debug_implementations)]

// The cfg without the feature: loom is not a dependency then, and every use
// of it in the sync shim would fail with an unresolved crate instead.
#[cfg(all(chase_lev_loom, not(feature = "loom")))]
compile_error!(
    "chase-lev: `--cfg chase_lev_loom` needs chase-lev's `loom` feature: add \
     `[target.'cfg(chase_lev_loom)'.dependencies] chase-lev = { ..., features = [\"loom\"] }` \
     to your Cargo.toml (see chase-lev's docs, \"Model-checking your scheduler\")"
);

// The modules, each using only those declared before it (a reader can take
// them in this order; tests/linearizability/tests/source_layout.rs checks it),
// but for `worker`, which builds on `deque` and is declared before it:
// rustdoc lists a type's impl blocks in the order of the modules that hold
// them, and `worker` holds `Worker`'s constructors, which a reader of its
// page looks for first (`deque` holds push and pop).
//
// The shim: std, loom or shuttle.
mod sync;
// The mutant builds' event log.
#[cfg(chase_lev_mutants)]
mod trace;
// The atomics the algorithm uses (logged in the mutant builds).
mod atomic;
// The ordering sites (`site!`), and the mutants of the mutant builds.
mod sites;
// The slots of one lap.
mod buffer;
// Hazard slots and retired buffers.
mod reclamation;
// The guard a steal holds on the buffer it reads.
mod hazard;
// The result of a steal.
mod steal;
// The owner's handle: constructors, `len`, `capacity` (read it after
// `deque`, see above).
mod worker;
// The Chase-Lev deque: its state, its handles, push, pop and steal.
mod deque;
// The thieves' handle: `len`, `is_empty`.
mod stealer;
// Batch steals.
mod batch;
// The injector, a FIFO queue for tasks from outside the pool.
mod injector;

pub use deque::{Stealer, Worker};
pub use injector::Injector;
#[cfg(chase_lev_hooks)]
pub use injector::{Pause, PauseHook};
pub use steal::Steal;

// The crate README's example (README.md, shipped in the package) runs as a
// doctest; the repository's README shows the same example
// (tests/linearizability/tests/readme.rs checks that they are the same).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExample;

/// The most tasks a batch steal moves when the caller gives no limit:
/// [`Stealer::steal_batch`] and [`Injector::steal_batch`] take at most this
/// many, [`Stealer::steal_batch_and_pop`] this many in all, and
/// [`Injector::steal_batch_and_pop`] one more (crossbeam-deque 0.8's values).
/// The `_with_limit` variants take a smaller limit.
///
/// ```
/// use chase_lev::{Steal, Worker, DEFAULT_BATCH_LIMIT};
///
/// let victim = Worker::new_fifo();
/// (0..4 * DEFAULT_BATCH_LIMIT).for_each(|task| victim.push(task));
/// let mine = Worker::new_fifo();
/// assert_eq!(victim.stealer().steal_batch(&mine), Steal::Success(()));
/// assert_eq!(mine.len(), DEFAULT_BATCH_LIMIT);
/// ```
pub const DEFAULT_BATCH_LIMIT: usize = 32;

/// (Internal builds only.) What a scenario can make the deque do at the
/// points where user code runs inside it.
#[cfg(chase_lev_hooks)]
#[doc(hidden)]
pub mod hooks {
    pub use crate::reclamation::after_this_threads_record_is_released;
    pub use crate::sync::before_next_buffer_allocation;
}

/// (GenMC build only, `--cfg chase_lev_genmc` under Miri.) What a scenario
/// calls where this GenMC cannot see the crate's own setup and teardown:
/// `start` before it starts a thread, `end_of_thread` last on each thread
/// it starts, `Injector::store_initial_values` once its injector is where
/// it stays.
#[cfg(chase_lev_genmc)]
#[doc(hidden)]
pub mod genmc {
    pub use crate::reclamation::end_of_thread;
    pub use crate::reclamation::store_the_registrys_initial_value as start;
}

#[cfg(chase_lev_mutants)]
#[doc(hidden)]
pub use sites::{joint_relaxation, Mutant};
#[cfg(chase_lev_mutants)]
pub use trace::{log_note, logged_events, set_event_log, take_thread_trace};

#[cfg(all(test, not(chase_lev_loom)))]
mod tests;
