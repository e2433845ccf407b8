//! The compatibility test of tests/crossbeam-compat, compiled here against
//! the real crossbeam-deque (a dev-dependency of this package): evidence that
//! the file is genuine crossbeam-deque code and that both crates agree on it.
#![cfg(not(miri))]

#[path = "../../tests/crossbeam-compat/tests/crossbeam_api.rs"]
mod crossbeam_api;
