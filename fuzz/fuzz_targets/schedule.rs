//! A small concurrent scenario under shuttle, interleaved by the fuzzer's
//! bytes, checked for exactly-once delivery (see `chase_lev_fuzz::schedule`).
#![no_main]

use chase_lev_fuzz::schedule::{run, ScheduleInput};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: ScheduleInput| run(&input));
