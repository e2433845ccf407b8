//! The loom model suite: every scenario against the deque as it ships
//! (the `chase-lev-loom` build: no mutant compiled in), explored
//! by loom (exhaustively, except the scenarios whose exhaustive run does not
//! fit CI: those under their stated preemption bound), then the canaries:
//! the suite must still kill the mutant that removes the owner's seq_cst
//! fence, and each registry scenario the planted fault it was written for
//! (`CANARIES`).
//!
//! Run with `cargo test --features loom` at the workspace root (add
//! `--release` for a run about five times faster). A plain test harness would
//! hide the interleaving counts of passing tests, so this target has its own
//! `main` (`harness = false` in Cargo.toml) and prints one line per scenario,
//! then the bound and interleaving count of each scenario that is not
//! explored exhaustively. `CHASE_LEV_LOOM_EXHAUSTIVE=1` drops every bound
//! (with `LOOM_MAX_DURATION=600`, each run ends by itself after 10 minutes);
//! `CHASE_LEV_LOOM_ONLY=text` runs only the scenario named `text` (or those
//! whose name contains it); `CHASE_LEV_LOOM_RAISE=n` raises every bound by
//! `n` and skips the canaries (`model-tests/interleavings.sh`).
//! `CHASE_LEV_LOOM_MUTANT=name` runs the selected scenarios against that
//! mutant instead (on the mutant build), and passes only if each of them
//! kills it: one scenario's planted fault, shown without the matrix.
#![cfg(feature = "loom")]

use std::process::ExitCode;

use model_tests::explore::{self, Exploration};
use model_tests::on_loom::scenarios as mutant_scenarios;
use model_tests::on_loom_shipped::scenarios::{self, Scenario};
use model_tests::Mutant;

fn describe_bound(scenario: &Scenario, exploration: &Exploration) -> String {
    match explore::loom_shipped_preemption_bound(scenario) {
        None if exploration.stopped_by_budget => "unbounded, partial".to_string(),
        None => "exhaustive".to_string(),
        Some(bound) if exploration.stopped_by_budget => format!("bound {bound}, partial"),
        Some(bound) => format!("preemption bound {bound}"),
    }
}

/// The scenarios this run is about: all of them, or under
/// `CHASE_LEV_LOOM_ONLY=text` only the scenario named `text`, or if none is,
/// those whose name contains it (to measure one scenario); the suite says
/// so.
fn selected_scenarios() -> Vec<&'static Scenario> {
    let only = std::env::var("CHASE_LEV_LOOM_ONLY").ok();
    if let Some(only) = &only {
        println!("CHASE_LEV_LOOM_ONLY={only}: only the scenario of that name, or those whose name contains it");
    }
    let named = |scenario: &&Scenario| only.as_deref() == Some(scenario.name);
    let exact = scenarios::ALL.iter().any(|scenario| named(&scenario));
    let mut selected: Vec<&'static Scenario> = scenarios::ALL
        .iter()
        .filter(|scenario| match &only {
            None => true,
            Some(_) if exact => named(scenario),
            Some(only) => scenario.name.contains(only.as_str()),
        })
        .collect();
    // The three-thread scenarios without a bound first: the longest runs
    // (one of them most of the suite's time), so that the other core works
    // through the rest beside them instead of after them.
    selected.sort_by_key(|scenario| {
        std::cmp::Reverse((scenario.threads, scenario.preemption_bound.is_none()))
    });
    selected
}

/// Every scenario keeps every promise in every explored interleaving.
fn every_scenario_keeps_every_promise_of_the_correct_deque() -> bool {
    let mut all_passed = true;
    let mut not_exhaustive = Vec::new();
    let selected = selected_scenarios();
    // Scenarios run side by side (`CHASE_LEV_MODEL_THREADS`, default: one
    // per core); each line is printed when its scenario is done.
    let explorations = explore::side_by_side(
        &selected,
        |scenario| explore::with_loom_shipped(scenario),
        |scenario, exploration| {
            print_line(scenario, exploration);
            if let Some(failure) = &exploration.failure {
                println!("    FAILED: {}", on_one_line(&failure.violation));
            }
        },
    );
    for (scenario, exploration) in selected.into_iter().zip(explorations) {
        all_passed &= exploration.passed();
        let bound = explore::loom_shipped_preemption_bound(scenario);
        if bound.is_some() || exploration.stopped_by_budget {
            not_exhaustive.push((scenario, bound, exploration));
        }
    }
    // What was not explored exhaustively, said once more at the end.
    for (scenario, bound, exploration) in not_exhaustive {
        let how_far = match (bound, exploration.stopped_by_budget) {
            (Some(bound), false) => format!("every interleaving with at most {bound} preemptions"),
            (Some(bound), true) => {
                format!("preemption bound {bound}, stopped by LOOM_MAX_DURATION")
            }
            (None, _) => "unbounded, stopped by LOOM_MAX_DURATION".to_string(),
        };
        println!(
            "not exhaustive: {} ({} threads): {how_far}, {} interleavings",
            scenario.name, scenario.threads, exploration.interleavings
        );
    }
    all_passed
}

/// A violation as one line of the suite's output. Loom's own messages span
/// lines ("Allocation leaked.\n  Index: 11", a causality violation with a
/// trailing newline), which would otherwise leave their tails, or a blank
/// line, on lines of their own between the suite's lines.
fn on_one_line(violation: &str) -> String {
    violation.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn print_line(scenario: &Scenario, exploration: &Exploration) {
    println!(
        "{:<62} family {}  {} threads  {:<19} {:>8} interleavings  {:>7.2} s  {:>7} {}",
        scenario.name,
        scenario.family,
        scenario.threads,
        describe_bound(scenario, exploration),
        exploration.interleavings,
        exploration.elapsed.as_secs_f64(),
        match exploration.cpu {
            Some(cpu) => format!("(cpu {:.2} s)", cpu.as_secs_f64()),
            None => String::new(),
        },
        if exploration.passed() { "ok" } else { "FAILED" },
    );
}

/// A scenario must still kill the planted fault it was written for; if it
/// stopped (say a cfg mistake compiled the checks out), this run must fail,
/// loudly. It runs on the mutant build (`chase-lev-loom-mutants`), which is
/// the shipped source plus the one weakened site.
fn still_kills(scenario: &str, mutant: Mutant, what_it_means: &str) -> bool {
    let scenario = mutant_scenarios::by_name(scenario).expect("the scenario exists");
    let exploration = explore::with_loom(scenario, Some(mutant));
    match &exploration.failure {
        Some(failure) => {
            println!(
                "canary: mutant {} killed by {} after {} interleavings: {}",
                mutant.name(),
                scenario.name,
                exploration.interleavings,
                on_one_line(&failure.violation)
            );
            true
        }
        None => {
            println!(
                "CANARY FAILED: the mutant {} survived {} interleavings of {}. {what_it_means}",
                mutant.name(),
                exploration.interleavings,
                scenario.name
            );
            false
        }
    }
}

/// The canaries: each scenario below must still kill the planted fault it
/// was written for. The missing seq_cst fence of the owner's pop; and the
/// registry's scenarios, each against its own fault: the single,
/// non-reentrant hazard slot of a steal nested in another steal of its
/// thread; a buffer change that moves the tasks it saw before an owner push
/// nested in its allocation changed them; a scan that stops at the first held buffer while two thieves
/// hold two; the owner's retire fence, without which its scan misses the
/// announcement a thief makes in a record an exited thief gave back; a
/// steal at its thread's exit, its record gone, that does not announce;
/// the injector's `len` that settles for an empty queue when pushes keep
/// moving its tail.
/// And the scenarios of the states no other scenario reaches, each against
/// the fault it was written for: a batch that fills a bounded destination
/// past its bound; `reserve` freeing the buffer it leaves under the
/// destination's thief; a retire whose scan misses the announcement of a
/// batch steal racing a shrink; a FIFO shrink that loses the newest task.
const CANARIES: &[(&str, Mutant, &str)] = &[
    (
        "prefilled_pop_pop_against_steal_steal",
        Mutant::TakeFence,
        "The suite no longer detects a task taken twice: it is not testing anything.",
    ),
    (
        "steal_nested_in_a_batch_keeps_the_outer_buffer_the_owner_retires",
        Mutant::HazardNotReentrant,
        "The suite no longer detects a nested steal that ends the outer steal's announcement.",
    ),
    (
        "owner_push_nested_in_the_allocation_of_a_grow",
        Mutant::BufferChangeNotReentrant,
        "The suite no longer detects a buffer change that ignores an owner push nested in its allocation.",
    ),
    (
        "owner_changes_buffer_twice_while_two_thieves_hold_slots",
        Mutant::ScanStopsAtFirstHeld,
        "The suite no longer detects a scan that frees a buffer a second thief holds.",
    ),
    (
        "record_of_an_exited_thief_taken_by_the_next_while_the_owner_scans",
        Mutant::RetireFence,
        "The suite no longer detects a scan that misses an announcement in a reused record.",
    ),
    (
        "steal_from_a_thread_local_destructor_borrows_a_record",
        Mutant::DestructorStealUnannounced,
        "The suite no longer detects a steal at a thread's exit that reads a buffer unannounced.",
    ),
    (
        "injector_len_and_is_empty_while_a_pusher_moves_the_tail",
        Mutant::InjectorLenSettlesForEmpty,
        "The suite no longer detects an injector len that loses tasks when it stops retrying.",
    ),
    (
        "batch_into_a_bounded_destination_takes_only_the_room_it_has",
        Mutant::ReserveOnePastBound,
        "The suite no longer detects a batch that fills a bounded destination past its bound.",
    ),
    (
        "reserve_moves_the_destination_to_a_new_lap_while_its_thief_steals",
        Mutant::ReserveFreesAtOnce,
        "The suite no longer detects a destination's buffer freed under its thief by reserve.",
    ),
    (
        "shrink_while_a_thief_steals_a_batch_task_by_task",
        Mutant::RetireFence,
        "The suite no longer detects a shrink that frees the buffer a batch steal reads.",
    ),
    (
        "fifo_shrink_and_retire_while_a_thief_steals",
        Mutant::ShrinkDropsNewest,
        "The suite no longer detects a FIFO shrink that loses a task.",
    ),
    (
        "injector_batch_of_two_marks_its_run_while_the_last_steal_walks_the_block",
        Mutant::InjectorRunTopMarkedFirst,
        "The suite no longer detects an injector block that is never freed.",
    ),
];

/// `CHASE_LEV_LOOM_MUTANT=name`: each selected scenario, at its own bound,
/// against the mutant `name`; whether every one of them killed it.
fn the_selected_scenarios_kill(name: &str) -> bool {
    let mutant = Mutant::from_name(name)
        .unwrap_or_else(|| panic!("CHASE_LEV_LOOM_MUTANT={name}: no such mutant"));
    println!(
        "CHASE_LEV_LOOM_MUTANT={name}: the scenarios against this mutant, on the mutant build"
    );
    let mut all_killed = true;
    for selected in selected_scenarios() {
        let scenario = mutant_scenarios::by_name(selected.name).expect("the scenario exists");
        let exploration = explore::with_loom(scenario, Some(mutant));
        let cpu = exploration.cpu.map_or(String::new(), |cpu| {
            format!(", cpu {:.2} s", cpu.as_secs_f64())
        });
        match &exploration.failure {
            Some(failure) => println!(
                "mutant {name} killed by {} after {} interleavings{cpu}: {}",
                scenario.name,
                exploration.interleavings,
                on_one_line(&failure.violation)
            ),
            None => {
                all_killed = false;
                println!(
                    "mutant {name} SURVIVED {} interleavings of {}{cpu}",
                    exploration.interleavings, scenario.name
                );
            }
        }
    }
    all_killed
}

fn the_suite_still_kills_its_canaries() -> bool {
    // Every canary runs, so that one run reports every one that stopped
    // (`all` would stop at the first).
    CANARIES
        .iter()
        .map(|&(scenario, mutant, what_it_means)| still_kills(scenario, mutant, what_it_means))
        .filter(|alive| !alive)
        .count()
        == 0
}

fn main() -> ExitCode {
    // Loom reports a failing execution by panicking; the suite prints the
    // violation itself, so the default hook's message and backtrace would
    // only repeat it.
    std::panic::set_hook(Box::new(|_| {}));
    if let Ok(name) = std::env::var("CHASE_LEV_LOOM_MUTANT") {
        return if the_selected_scenarios_kill(&name) {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }
    println!(
        "loom model suite: the deque as it ships (chase-lev-loom: the chase-lev source with \
         --cfg chase_lev_loom, no mutant compiled in; the same reclamation and fences as the \
         std build, only atomics, cells and threads are loom's)"
    );
    let suite_passed = every_scenario_keeps_every_promise_of_the_correct_deque();
    // A run that raises the bounds measures how far they go
    // (model-tests/interleavings.sh); the canaries are the test command's.
    let canaries_alive = if std::env::var(explore::RAISE_VAR).is_ok() {
        println!("canaries not run: {} is set", explore::RAISE_VAR);
        true
    } else {
        the_suite_still_kills_its_canaries()
    };
    if suite_passed && canaries_alive {
        println!("loom model suite: ok");
        ExitCode::SUCCESS
    } else {
        println!("loom model suite: FAILED");
        ExitCode::FAILURE
    }
}
