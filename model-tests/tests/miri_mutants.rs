//! Miri's column of the mutation matrix: every mutant, on real (emulated)
//! threads of the `chase-lev-mutants` build, under miri's weak-memory
//! emulation. Miri cannot run inside the matrix binary, so this target prints
//! one line per mutant (`miri-mutant <name> caught|missed <detail>`) and
//! `model-tests/run-miri-matrix.sh` runs it over several seeds and writes
//! `model-tests/miri-results.tsv`, which the matrix reads.
//!
//! Without miri this runs too (in plain `cargo test`), as a fast smoke test
//! of the shapes on the hardware; it then asserts only that the correct deque
//! keeps its promises, since catching a weak-memory mutant on one run of real
//! threads is luck.
//!
//! Each shape is a tiny program whose every task is a distinct id; a
//! violation is a task taken twice, a task lost, an id never pushed (zeroes
//! from an unwritten slot), or a panic of the deque's own checks (the debug
//! check that an index lies in its buffer's lap stops `no-reload-after-grow`
//! before it writes into a retired buffer).

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

use chase_lev_mutants::{Mutant, Steal, Stealer, Worker};

/// What one run of a shape found: the ids taken, by everyone.
fn judge(shape: &str, pushed: u64, taken: &[u64]) -> Result<(), String> {
    if let Some(id) = taken.iter().find(|&&id| id == 0 || id > pushed) {
        return Err(format!(
            "{shape}: took task {id}, never pushed (an unwritten slot)"
        ));
    }
    for id in 1..=pushed {
        match taken.iter().filter(|&&taken| taken == id).count() {
            0 => return Err(format!("{shape}: task {id} lost")),
            1 => {}
            _ => return Err(format!("{shape}: task {id} taken twice")),
        }
    }
    Ok(())
}

fn steal_into(stealer: &Stealer<u64>, taken: &mut Vec<u64>) {
    if let Steal::Success(id) = stealer.steal() {
        taken.push(id);
    }
}

fn drain(worker: Worker<u64>, taken: &mut Vec<u64>) {
    while let Some(id) = worker.pop() {
        taken.push(id);
    }
}

/// The last-element race: tasks 1 and 2, the owner pops twice while a
/// thief steals twice.
fn pop_race(mutant: Option<Mutant>) -> Result<(), String> {
    let worker = Worker::new_mutant(false, 4, false, mutant);
    worker.push(1);
    worker.push(2);
    let stealer = worker.stealer();
    let thief = thread::spawn(move || {
        let mut taken = Vec::new();
        steal_into(&stealer, &mut taken);
        steal_into(&stealer, &mut taken);
        taken
    });
    let mut taken: Vec<u64> = (0..2).filter_map(|_| worker.pop()).collect();
    taken.extend(
        thief
            .join()
            .unwrap_or_else(|payload| panic::resume_unwind(payload)),
    );
    drain(worker, &mut taken);
    judge("pop race", 2, &taken)
}

/// The same race, with the thief held back on a relaxed flag until the
/// owner's first pop is done: a relaxed flag gives no happens-before, so the
/// thief may still read an old bottom, and miri's store buffers keep old
/// values around long enough to show the missing steal fence.
fn held_back_thief(mutant: Option<Mutant>) -> Result<(), String> {
    let worker = Worker::new_mutant(false, 4, false, mutant);
    worker.push(1);
    worker.push(2);
    let stealer = worker.stealer();
    let go = std::sync::Arc::new(AtomicBool::new(false));
    let thief_go = go.clone();
    let thief = thread::spawn(move || {
        while !thief_go.load(Ordering::Relaxed) {
            thread::yield_now();
        }
        let mut taken = Vec::new();
        steal_into(&stealer, &mut taken);
        steal_into(&stealer, &mut taken);
        taken
    });
    let mut taken: Vec<u64> = worker.pop().into_iter().collect();
    go.store(true, Ordering::Relaxed);
    taken.extend(worker.pop());
    taken.extend(
        thief
            .join()
            .unwrap_or_else(|payload| panic::resume_unwind(payload)),
    );
    drain(worker, &mut taken);
    judge("held-back thief", 2, &taken)
}

/// Pushes and a grow race a thief: capacity 2, three pushes, two pops.
fn grow_race(mutant: Option<Mutant>) -> Result<(), String> {
    let worker = Worker::new_mutant(false, 2, false, mutant);
    let stealer = worker.stealer();
    let thief = thread::spawn(move || {
        let mut taken = Vec::new();
        steal_into(&stealer, &mut taken);
        steal_into(&stealer, &mut taken);
        taken
    });
    for id in 1..=3 {
        worker.push(id);
    }
    let mut taken: Vec<u64> = (0..2).filter_map(|_| worker.pop()).collect();
    taken.extend(
        thief
            .join()
            .unwrap_or_else(|payload| panic::resume_unwind(payload)),
    );
    drain(worker, &mut taken);
    judge("grow race", 3, &taken)
}

/// Runs every shape `repetitions` times; the first violation, if any.
fn try_shapes(mutant: Option<Mutant>, repetitions: usize) -> Result<(), String> {
    for _ in 0..repetitions {
        pop_race(mutant)?;
        held_back_thief(mutant)?;
        grow_race(mutant)?;
    }
    Ok(())
}

/// `try_shapes`, with a panic of a shape's thread (the deque's own checks)
/// reported as a violation. A thief that is not joined after the owner's
/// panic keeps running on its own `Stealer`, which owns what it uses.
fn try_mutant(mutant: Option<Mutant>, repetitions: usize) -> Result<(), String> {
    let quiet = panic::take_hook();
    panic::set_hook(Box::new(|_| {}));
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| try_shapes(mutant, repetitions)));
    panic::set_hook(quiet);
    outcome.unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("a panic");
        Err(format!("panicked: {message}"))
    })
}

fn main() {
    let under_miri = cfg!(miri);
    let repetitions = std::env::var("MIRI_REPETITIONS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(if under_miri { 8 } else { 50 });
    if let Err(violation) = try_mutant(None, repetitions) {
        panic!("the correct deque broke a promise: {violation}");
    }
    println!("miri-mutant correct kept ({repetitions} repetitions of 3 shapes)");
    // A first argument `a,b` runs only those mutants (the seed script resumes
    // with the rest after a mutant made miri stop on undefined behaviour).
    // An argument, not an environment variable: under cargo-miri a variable
    // for this did not reliably reach the program.
    let selected = std::env::args()
        .nth(1)
        .filter(|list| !list.is_empty() && !list.starts_with('-'));
    let selected: Option<Vec<&str>> = selected.as_deref().map(|list| list.split(',').collect());
    if let Some(names) = &selected {
        println!("miri-mutant selection {}", names.join(","));
    }
    for mutant in Mutant::ALL {
        if selected
            .as_ref()
            .is_some_and(|names| !names.contains(&mutant.name()))
        {
            continue;
        }
        match try_mutant(Some(mutant), repetitions) {
            Err(violation) => println!("miri-mutant {} caught {violation}", mutant.name()),
            Ok(()) => println!("miri-mutant {} missed", mutant.name()),
        }
    }
}
