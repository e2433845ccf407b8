//! What the comparison bench (`compare/`), the contended bench
//! (`contended/`) and the callgrind workloads (`examples/owner_paths.rs`)
//! share: the deques behind one interface ([`contenders`]), the injectors
//! behind another ([`injectors`]), the owner-only workloads
//! ([`owner_paths`]), paired ratios and their verdicts ([`paired`]), the
//! tables they print ([`table`]) and how a thread waits for the others
//! ([`wait_until`]).

pub mod contenders;
pub mod injectors;
pub mod owner_paths;
pub mod paired;
pub mod table;

/// Spins briefly, then yields: the machine has two cores and four threads
/// may be waiting at once. A long spin is worse here: when another user's
/// job takes one core, the waiting thread would burn the timeslice that the
/// working thread needs.
pub fn wait_until(mut condition: impl FnMut() -> bool) {
    let mut spins = 0u32;
    while !condition() {
        if spins < 64 {
            std::hint::spin_loop();
            spins += 1;
        } else {
            std::thread::yield_now();
        }
    }
}

/// `$CARGO_TARGET_DIR/<name>`, or `<name>` in the target directory that
/// holds this executable (`target/release/{deps,examples}/<executable>`):
/// where the benches' programs leave their figures for the compare bench's
/// targets table.
pub fn target_file(name: &str) -> std::path::PathBuf {
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return std::path::PathBuf::from(target).join(name);
    }
    let executable = std::env::current_exe().expect("a program knows its own path");
    match executable.ancestors().nth(3) {
        Some(target) => target.join(name),
        None => std::path::PathBuf::from("target").join(name),
    }
}
