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
//! and [`Worker::with_capacity`].
//!
//! # Compatibility with crossbeam-deque 0.8
//!
//! Every public item of crossbeam-deque 0.8 ([`Worker`], [`Stealer`],
//! [`Injector`], [`Steal`]) is here with the same signature and the same
//! observable behaviour, checked by test files that run the same assertions
//! against crossbeam-deque itself and against this crate (the repository's
//! `tests/crossbeam-compat/`). That includes where batch steals put their
//! tasks: the destination's owner pops them in the order the victim's owner
//! would have (oldest first from a FIFO worker or an injector, newest first
//! from a LIFO worker), and `steal_batch_and_pop` returns the first of that
//! order. A project that uses crossbeam-deque through another crate (rayon)
//! switches with `[patch.crates-io]`, see the README.
//!
//! Beyond crossbeam-deque: bounded workers ([`Worker::new_lifo_bounded`],
//! [`Worker::new_fifo_bounded`], [`Worker::try_push`], [`Worker::bound`]),
//! [`Worker::with_capacity`] and [`Worker::capacity`]. A batch steal into a
//! bounded worker takes at most as many tasks as it has room for (as
//! crossbeam's would with that limit); with no room, `steal_batch` returns
//! `Empty` and `steal_batch_and_pop` still returns one task.
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
//! # Model-checking your scheduler
//!
//! Built with `RUSTFLAGS="--cfg chase_lev_loom"`, chase-lev runs on
//! [loom](https://docs.rs/loom)'s atomics, fences, cells and threads (the
//! same algorithm, reclamation and fences as the std build), so a loom test
//! of your scheduler explores the deque inside it too. The cfg is
//! crate-specific (like `crossbeam_loom` and `st3_loom`; a plain `loom` cfg
//! would switch every crate that reads it), and no cargo feature can turn it
//! on: a normal build never compiles loom. Under the cfg, `new_lifo` and
//! `new_fifo` start at 4 slots, so that a model stays small. In your crate:
//!
//! ```toml
//! [target.'cfg(chase_lev_loom)'.dependencies]
//! loom = "0.7"
//! ```
//!
//! then run `RUSTFLAGS="--cfg chase_lev_loom" cargo test --release` (in a
//! target directory of its own: the flag rebuilds everything), with your own
//! atomics and threads taken from loom under the same cfg:
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
//! two-worker scheduler whose loom test passes, and catches a planted bug in
//! its termination counter. Declare the cfg to rustc's lint with
//! `[lints.rust] unexpected_cfgs = { level = "warn", check-cfg =
//! ["cfg(chase_lev_loom)"] }`; bound loom's search with
//! `LOOM_MAX_PREEMPTIONS` when the model's threads spin.
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
//! mutation matrix); `tests/` checks real concurrent histories for
//! linearizability; miri and ThreadSanitizer run the unit and stress tests.
//! See the repository's README.
//!
//! # Memory
//!
//! The buffer is a ring of slots that doubles when full and halves, with
//! hysteresis, when it stays under a quarter full (over `capacity / 2` owner
//! pops in a row, whether they returned a task or found that thieves had
//! taken them all). A retired buffer is freed at the owner's next buffer
//! change once no thief holds it (each thread announces the buffer it reads
//! in a hazard slot, with no barrier beyond the steal's own fence), and every
//! remaining one when the deque drops. `top` and `bottom`
//! live on separate cache lines. Tasks left in the deque are dropped exactly
//! once when the last handle goes; zero-sized tasks take no memory.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs, missing_debug_implementations)]

mod batch;
mod buffer;
mod deque;
mod injector;
mod policy;
mod reclamation;
mod shrink;
mod steal;
mod stealer;
mod sync;
#[cfg(chase_lev_mutants)]
mod trace;
mod worker;

pub use injector::Injector;
#[cfg(any(chase_lev_loom, chase_lev_shuttle, chase_lev_mutants))]
pub use injector::{Pause, PauseHook};
pub use steal::Steal;
pub use stealer::Stealer;
pub use worker::Worker;

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

#[cfg(chase_lev_mutants)]
pub use policy::Mutant;
#[cfg(chase_lev_mutants)]
pub use trace::{log_note, logged_events, set_event_log, take_thread_trace};

#[cfg(all(test, not(chase_lev_loom)))]
mod tests;

#[cfg(all(test, not(chase_lev_loom)))]
mod injector_tests;
