//! What the comparison bench (`compare/`) and the callgrind workloads
//! (`examples/owner_paths.rs`) share: the deques behind one interface
//! ([`contenders`]), the owner-only workloads ([`owner_paths`]) and how a
//! thread waits for the others ([`wait_until`]).

pub mod contenders;
pub mod owner_paths;

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
