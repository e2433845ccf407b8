//! Replays the committed seed corpus through the harnesses without libFuzzer,
//! decoding each file exactly as `libfuzzer-sys` does, so that `cargo test`
//! in `fuzz/` (stable Rust, no sanitizer) checks the seeds still pass.

use std::path::{Path, PathBuf};

use arbitrary::{Arbitrary, Unstructured};
use chase_lev_fuzz::{ops, schedule};

/// The committed seeds of a target: `corpus/<target>/seed-*`.
fn seeds(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let directory = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(target);
    let mut seeds: Vec<_> = std::fs::read_dir(&directory)
        .unwrap_or_else(|error| panic!("{}: {error}", directory.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| {
            path.file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with("seed-"))
        })
        .map(|path| {
            let bytes = std::fs::read(&path).expect("a readable seed");
            (path, bytes)
        })
        .collect();
    seeds.sort();
    assert!(!seeds.is_empty(), "no seed in {}", directory.display());
    seeds
}

/// Decodes like `fuzz_target!`: too short or undecodable inputs are skipped
/// by libFuzzer, so a seed must decode.
fn decode<'a, T: Arbitrary<'a>>(path: &Path, bytes: &'a [u8]) -> T {
    assert!(
        bytes.len() >= T::size_hint(0).0,
        "{}: shorter than any input",
        path.display()
    );
    T::arbitrary_take_rest(Unstructured::new(bytes))
        .unwrap_or_else(|error| panic!("{}: does not decode: {error}", path.display()))
}

#[test]
fn every_ops_seed_matches_the_model() {
    for (path, bytes) in seeds("ops") {
        let input: ops::OpsInput = decode(&path, &bytes);
        ops::run(&input);
    }
}

#[test]
fn every_schedule_seed_is_linearizable_and_exactly_once() {
    for (path, bytes) in seeds("schedule") {
        let input: schedule::ScheduleInput = decode(&path, &bytes);
        schedule::run(&input);
    }
}
