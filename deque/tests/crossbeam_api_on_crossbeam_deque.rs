//! The compatibility tests of tests/crossbeam-compat, compiled here against
//! the real crossbeam-deque (a dev-dependency of this package): evidence that
//! the files are genuine crossbeam-deque code, that their assertions are
//! crossbeam-deque's behaviour, and (with tests/crossbeam-compat, where the
//! same files run on chase-lev) that both crates agree on them.
#![cfg(not(miri))]

#[path = "../../tests/crossbeam-compat/tests/crossbeam_api.rs"]
mod crossbeam_api;

#[path = "../../tests/crossbeam-compat/tests/worker_and_stealer.rs"]
mod worker_and_stealer;

#[path = "../../tests/crossbeam-compat/tests/batch_steals.rs"]
mod batch_steals;

#[path = "../../tests/crossbeam-compat/tests/injector.rs"]
mod injector;
