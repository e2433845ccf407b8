//! The deque as the mutant builds compile it: `deque/src` with each logic
//! mutant of `model-tests/mutants.md` applied to a copy of the function it
//! changes, chosen when the deque carries that mutant (generated into
//! `$OUT_DIR/src/` by `build.rs`; the shipped source has no such branch).
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs, missing_debug_implementations)]

include!(concat!(env!("OUT_DIR"), "/src/lib.rs"));
