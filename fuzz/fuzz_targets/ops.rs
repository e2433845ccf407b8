//! Arbitrary operations on workers and stealers, one thread, against a
//! `VecDeque` model (see `chase_lev_fuzz::ops`).
#![no_main]

use chase_lev_fuzz::ops::{run, OpsInput};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: OpsInput| run(&input));
