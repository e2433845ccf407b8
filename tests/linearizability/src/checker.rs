//! The linearizability check: is there a total order of the history's steps,
//! consistent with the precedence the harness created, in which every step is
//! legal for the sequential deque?
//!
//! # Search
//!
//! Wing and Gong's search: repeatedly pick a *minimal* pending operation (one
//! that no pending operation must precede), apply it to the sequential model,
//! recurse, undo on failure. With precedence given by program order and
//! phases, the minimal operations are the next step of each thread whose
//! phase is the current one, so a state of the search is a vector of
//! per-thread progress, and the search is a merge of the threads' sequences.
//!
//! Lowe's memoisation: a (linearized set, model state) pair that once failed
//! fails again, so it is cached. The linearized set is the progress vector.
//! When every push has a distinct task (what the harness does), the model
//! state is a function of the linearized set (the tasks pushed and not yet
//! removed, in push order), so the progress vector alone is the key; with
//! repeated tasks the model's contents join the key. One more bit of state
//! rides along: which threads have moved `top` in the current phase, needed
//! by the `Retry` rule below.
//!
//! Partial-order reduction: some steps are taken as soon as they are a
//! thread's next step and legal, without branching, because moving them
//! earlier never invalidates a linearization (an exchange argument):
//! - a step that changes nothing: `Retry`, `Empty` or `pop -> None` on an
//!   empty deque, `Full` on a full one (the steps it jumps over see the same
//!   deque);
//! - a step that takes the oldest task `v` while `v` is the oldest (a steal,
//!   a batch's single steal, a FIFO pop), when the history has no `Full` and
//!   pushes distinct tasks: no
//!   step it jumps over can take the oldest task (only this one takes `v`,
//!   tasks being distinct, and `v` stays the oldest until taken), and with
//!   one task fewer every other step stays legal (a LIFO pop may now take
//!   the last task, which only adds a top move for the `Retry` rule). A
//!   `Full` jumped over would see one task fewer, hence the exception.
//!
//! This narrows the search to the choices that matter: where the owner's
//! pushes and LIFO pops fall between the thieves' steps.
//!
//! # The `Retry` rule
//!
//! A steal may answer `Retry` only because it lost a race on `top`: some
//! operation it overlapped moved `top` (a steal, a FIFO pop, or a LIFO pop of
//! the last task). Without timestamps, two operations overlap when they are
//! of different threads and in the same phase. So when the search completes a
//! phase, every thread that answered `Retry` in it must see another thread
//! that moved `top` in that phase in the linearization found (whether a LIFO
//! pop took the last task depends on where it is linearized).

use std::collections::HashSet;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};

use crate::history::{Entry, Flavor, History, Operation, Outcome, Phase, Task, ThreadIndex};
use crate::specification::{BatchStart, Refusal, SequentialDeque, Step, Undo};

/// The most threads a history may have (the `Retry` bookkeeping is a bit set).
pub const MAX_THREADS: usize = 64;

/// One step placed in a linearization: which thread, which of its entries,
/// and (for a batch steal) which of the batch's single steals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placed {
    /// The thread.
    pub thread: ThreadIndex,
    /// The index of the entry in the thread's log.
    pub entry: usize,
    /// 0 for every operation but the second and later steals of a batch.
    pub part: usize,
}

/// A linearization found: the order of every step.
#[derive(Clone, Debug)]
pub struct Linearization {
    /// The steps in linearization order.
    pub order: Vec<Placed>,
    /// How many search states were visited.
    pub states: usize,
}

/// Why a history is not linearizable, as far as the search got: the longest
/// prefix it could linearize, the model there, and why each operation that
/// could come next cannot.
#[derive(Clone, Debug)]
pub struct Violation {
    /// The history that was checked.
    pub history: History,
    /// The longest linearizable prefix the search found.
    pub prefix: Vec<Placed>,
    /// The sequential deque after that prefix, oldest first.
    pub model: Vec<Task>,
    /// Each operation that could have come next, and why it cannot.
    pub blocked: Vec<Blocked>,
    /// How many search states were visited.
    pub states: usize,
}

/// An operation that cannot be linearized next.
#[derive(Clone, Debug)]
pub struct Blocked {
    /// Its thread.
    pub thread: ThreadIndex,
    /// The operation and its outcome.
    pub entry: Entry,
    /// Why not.
    pub reason: String,
}

/// Checks `history` for linearizability against its specification.
///
/// # Panics
/// If the history has more than [`MAX_THREADS`] threads, or a thread's phases
/// go backwards (both are harness bugs, not deque bugs).
pub fn check(history: &History) -> Result<Linearization, Box<Violation>> {
    check_with(history, Rules::All)
}

/// Which rules a check applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Rules {
    /// The whole specification.
    All,
    /// Only which task each operation may take: no rule that depends on how
    /// many tasks are present (a batch's size, `Full`) nor the `Retry` rule.
    /// Removing a task from a history can break those rules (fewer tasks
    /// present, or no more top move for a `Retry`), never these; the
    /// minimiser relies on that.
    TaskOrder,
}

pub(crate) fn check_with(history: &History, rules: Rules) -> Result<Linearization, Box<Violation>> {
    let plan = Plan::new(history);
    let mut search = Search::new(&plan, history, rules);
    if search.run() {
        Ok(Linearization {
            order: search
                .path
                .iter()
                .map(|&(thread, step)| plan.placed(thread, step))
                .collect(),
            states: search.states,
        })
    } else {
        Err(Box::new(search.violation()))
    }
}

/// One step of one thread, with where it came from.
struct PlannedStep {
    step: Step,
    phase: Phase,
    entry: usize,
    part: usize,
}

/// The history turned into per-thread step sequences.
struct Plan {
    threads: Vec<Vec<PlannedStep>>,
    /// For each phase, the threads that answered `Retry` in it.
    retrying: Vec<u64>,
    /// Whether every pushed task is distinct (then the progress vector
    /// determines the model state).
    distinct_pushes: bool,
    /// Whether some `try_push` reported `Full`.
    has_full: bool,
}

impl Plan {
    fn new(history: &History) -> Plan {
        assert!(
            history.threads.len() <= MAX_THREADS,
            "the checker handles at most {MAX_THREADS} threads"
        );
        let mut retrying: Vec<u64> = Vec::new();
        let mut pushed = HashSet::new();
        let mut distinct_pushes = true;
        let mut has_full = false;
        let mut threads = Vec::with_capacity(history.threads.len());
        for (thread, log) in history.threads.iter().enumerate() {
            let mut steps = Vec::new();
            let mut last_phase = 0;
            for (index, entry) in log.entries.iter().enumerate() {
                assert!(
                    entry.phase >= last_phase,
                    "thread {thread}'s entry {index} is in phase {} after phase {last_phase}: phases must not go backwards",
                    entry.phase
                );
                last_phase = entry.phase;
                let mut add = |step: Step, part: usize| {
                    steps.push(PlannedStep {
                        step,
                        phase: entry.phase,
                        entry: index,
                        part,
                    });
                };
                match (&entry.operation, &entry.outcome) {
                    (Operation::Push(task) | Operation::TryPush(task), Outcome::Pushed) => {
                        distinct_pushes &= pushed.insert(*task);
                        add(Step::Push(*task), 0);
                    }
                    (Operation::TryPush(_), Outcome::Full) => {
                        has_full = true;
                        add(Step::Full, 0);
                    }
                    (Operation::Pop, Outcome::Popped(Some(task))) => add(Step::PopSome(*task), 0),
                    (Operation::Pop, Outcome::Popped(None)) => add(Step::PopNone, 0),
                    (Operation::Steal | Operation::StealBatch { .. }, Outcome::Empty) => {
                        add(Step::Empty, 0)
                    }
                    (Operation::Steal | Operation::StealBatch { .. }, Outcome::Retry) => {
                        let phase = entry.phase as usize;
                        if retrying.len() <= phase {
                            retrying.resize(phase + 1, 0);
                        }
                        retrying[phase] |= 1 << thread;
                        add(Step::Retry, 0);
                    }
                    (Operation::Steal, Outcome::Stolen(tasks)) => match tasks[..] {
                        [task] => add(Step::Steal { task, batch: None }, 0),
                        _ => add(
                            Step::Impossible("a single steal took other than one task"),
                            0,
                        ),
                    },
                    (Operation::StealBatch { limit, .. }, Outcome::Stolen(tasks)) => {
                        if tasks.is_empty() {
                            add(
                                Step::Impossible("a batch steal reported success but took no task"),
                                0,
                            );
                        }
                        for (part, &task) in tasks.iter().enumerate() {
                            let batch = (part == 0).then_some(BatchStart {
                                count: tasks.len(),
                                limit: *limit,
                            });
                            add(Step::Steal { task, batch }, part);
                        }
                    }
                    _ => add(
                        Step::Impossible("this outcome does not answer this operation"),
                        0,
                    ),
                }
            }
            threads.push(steps);
        }
        Plan {
            threads,
            retrying,
            distinct_pushes,
            has_full,
        }
    }

    fn placed(&self, thread: ThreadIndex, step: usize) -> Placed {
        let planned = &self.threads[thread][step];
        Placed {
            thread,
            entry: planned.entry,
            part: planned.part,
        }
    }

    fn retrying_in(&self, phase: Phase) -> u64 {
        self.retrying.get(phase as usize).copied().unwrap_or(0)
    }
}

/// Whether, in a completed phase, every thread that answered `Retry` had
/// another thread move `top` in that phase.
fn retries_justified(retrying: u64, moved_top: u64) -> bool {
    let mut unchecked = retrying;
    while unchecked != 0 {
        let thread = unchecked.trailing_zeros();
        unchecked &= unchecked - 1;
        if moved_top & !(1u64 << thread) == 0 {
            return false;
        }
    }
    true
}

/// A fast hasher for the memo's integer keys (the keys are not adversarial).
#[derive(Default)]
struct WordHasher(u64);

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        // The finaliser of SplitMix64: spreads every input bit.
        let mut x = self.0;
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^ (x >> 31)
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    fn write_u128(&mut self, word: u128) {
        self.write_u64(word as u64);
        self.write_u64((word >> 64) as u64);
    }

    fn write_usize(&mut self, word: usize) {
        self.write_u64(word as u64);
    }
}

type FastSet<K> = HashSet<K, BuildHasherDefault<WordHasher>>;

/// The memo of failed states.
enum Visited {
    /// Progress and the moved-`top` set packed into one integer: `bits` bits
    /// per thread, then one bit per thread.
    Packed { bits: u32, set: FastSet<u128> },
    /// Progress, the moved-`top` set and, when pushes repeat tasks, the
    /// model's contents.
    Exact {
        with_model: bool,
        set: FastSet<Box<[u64]>>,
    },
}

impl Visited {
    fn new(plan: &Plan) -> Visited {
        let longest = plan.threads.iter().map(Vec::len).max().unwrap_or(0) as u64;
        let bits = 64 - longest.leading_zeros();
        let threads = plan.threads.len() as u32;
        if plan.distinct_pushes && threads * (bits + 1) <= 128 {
            Visited::Packed {
                bits,
                set: FastSet::default(),
            }
        } else {
            Visited::Exact {
                with_model: !plan.distinct_pushes,
                set: FastSet::default(),
            }
        }
    }

    /// Records the state; returns `false` if it was already there.
    fn insert(&mut self, progress: &[u32], moved_top: u64, model: &SequentialDeque) -> bool {
        match self {
            Visited::Packed { bits, set } => {
                let mut key = 0u128;
                for &done in progress {
                    key = (key << *bits) | u128::from(done);
                }
                key = (key << progress.len()) | u128::from(moved_top);
                set.insert(key)
            }
            Visited::Exact { with_model, set } => {
                let mut key: Vec<u64> = progress.iter().map(|&done| u64::from(done)).collect();
                key.push(moved_top);
                if *with_model {
                    key.extend(model.tasks());
                }
                set.insert(key.into_boxed_slice())
            }
        }
    }
}

/// How the search arrived at a state, to go back.
struct Arrival {
    thread: ThreadIndex,
    undo: Undo,
    moved_top_before: u64,
}

/// A state on the search stack.
struct Frame {
    arrival: Option<Arrival>,
    /// The next thread to try from this state.
    next_thread: usize,
    /// A thread whose next step can be taken without branching (see the
    /// partial-order reduction above): the only one tried.
    forced: Option<ThreadIndex>,
}

struct Search<'a> {
    plan: &'a Plan,
    rules: Rules,
    history: &'a History,
    model: SequentialDeque,
    progress: Vec<u32>,
    /// Threads that moved `top` in the current phase.
    moved_top: u64,
    visited: Visited,
    /// The steps applied so far: (thread, step index).
    path: Vec<(ThreadIndex, usize)>,
    deepest: Vec<(ThreadIndex, usize)>,
    states: usize,
}

impl<'a> Search<'a> {
    fn new(plan: &'a Plan, history: &'a History, rules: Rules) -> Search<'a> {
        Search {
            plan,
            rules,
            history,
            model: Search::model(history, rules),
            progress: vec![0; plan.threads.len()],
            moved_top: 0,
            visited: Visited::new(plan),
            path: Vec::new(),
            deepest: Vec::new(),
            states: 0,
        }
    }

    fn model(history: &History, rules: Rules) -> SequentialDeque {
        let model = SequentialDeque::new(history.specification);
        match rules {
            Rules::All => model,
            Rules::TaskOrder => model.without_length_rules(),
        }
    }

    fn next_step(&self, thread: ThreadIndex) -> Option<&'a PlannedStep> {
        self.plan.threads[thread].get(self.progress[thread] as usize)
    }

    /// The phase of the earliest pending step; `None` when all are placed.
    fn current_phase(&self) -> Option<Phase> {
        (0..self.plan.threads.len())
            .filter_map(|thread| self.next_step(thread).map(|s| s.phase))
            .min()
    }

    fn new_frame(&mut self, arrival: Option<Arrival>) -> Frame {
        let phase = self.current_phase();
        let forced = (0..self.plan.threads.len()).find(|&thread| match self.next_step(thread) {
            Some(planned) if Some(planned.phase) == phase => self.takes_eagerly(&planned.step),
            _ => false,
        });
        Frame {
            arrival,
            next_thread: 0,
            forced,
        }
    }

    /// Whether `step` may be taken now without trying the alternatives.
    fn takes_eagerly(&mut self, step: &Step) -> bool {
        let changes_nothing =
            matches!(step, Step::Retry | Step::Empty | Step::PopNone | Step::Full);
        let takes_oldest = match step {
            Step::Steal { .. } => true,
            Step::PopSome(_) => self.history.specification.flavor == Flavor::Fifo,
            _ => false,
        };
        // Taking the oldest early relies on distinct tasks (only this step
        // takes `v`) and on no `Full` seeing the deque one task shorter.
        let may_take_oldest_early = self.plan.distinct_pushes && !self.plan.has_full;
        if !(changes_nothing || takes_oldest && may_take_oldest_early) {
            return false;
        }
        match self.model.apply(step) {
            Ok(applied) => {
                self.model.undo(applied.undo);
                true
            }
            Err(_) => false,
        }
    }

    /// Tries to place the next step of `thread`; on success the state has
    /// moved forward and the arrival to undo it is returned.
    fn advance(&mut self, thread: ThreadIndex) -> Option<Arrival> {
        let planned = self.next_step(thread)?;
        let phase = planned.phase;
        let applied = self.model.apply(&planned.step).ok()?;
        let moved_top_before = self.moved_top;
        let moved_top = moved_top_before | (u64::from(applied.moved_top) << thread);
        self.progress[thread] += 1;
        if self.current_phase() != Some(phase) {
            // This step completed its phase: its retries must be justified.
            if self.rules == Rules::All
                && !retries_justified(self.plan.retrying_in(phase), moved_top)
            {
                self.progress[thread] -= 1;
                self.model.undo(applied.undo);
                return None;
            }
            self.moved_top = 0;
        } else {
            self.moved_top = moved_top;
        }
        self.path.push((thread, self.progress[thread] as usize - 1));
        Some(Arrival {
            thread,
            undo: applied.undo,
            moved_top_before,
        })
    }

    fn retreat(&mut self, arrival: Arrival) {
        self.progress[arrival.thread] -= 1;
        self.model.undo(arrival.undo);
        self.moved_top = arrival.moved_top_before;
        self.path.pop();
    }

    fn done(&self) -> bool {
        self.current_phase().is_none()
    }

    /// Depth-first search with an explicit stack (histories of thousands of
    /// steps must not overflow a small thread stack, such as shuttle's).
    fn run(&mut self) -> bool {
        if self.done() {
            return true;
        }
        self.visited
            .insert(&self.progress, self.moved_top, &self.model);
        self.states = 1;
        let mut stack = vec![self.new_frame(None)];
        while let Some(frame) = stack.last_mut() {
            let candidate = match frame.forced {
                Some(thread) if frame.next_thread == 0 => {
                    frame.next_thread = usize::MAX;
                    Some(thread)
                }
                Some(_) => None,
                None => {
                    let phase = self.current_phase();
                    let threads = self.plan.threads.len();
                    let found = (frame.next_thread..threads).find(|&thread| {
                        self.next_step(thread)
                            .is_some_and(|s| Some(s.phase) == phase)
                    });
                    frame.next_thread = found.map_or(threads, |thread| thread + 1);
                    found
                }
            };
            let Some(thread) = candidate else {
                let frame = stack.pop().expect("the loop holds a frame");
                if let Some(arrival) = frame.arrival {
                    self.retreat(arrival);
                }
                continue;
            };
            let Some(arrival) = self.advance(thread) else {
                continue;
            };
            if self.path.len() > self.deepest.len() {
                self.deepest.clone_from(&self.path);
            }
            if self.done() {
                return true;
            }
            if !self
                .visited
                .insert(&self.progress, self.moved_top, &self.model)
            {
                self.retreat(arrival);
                continue;
            }
            self.states += 1;
            let frame = self.new_frame(Some(arrival));
            stack.push(frame);
        }
        false
    }

    /// Replays the deepest prefix and asks each candidate why it cannot come
    /// next.
    fn violation(&mut self) -> Violation {
        let deepest = std::mem::take(&mut self.deepest);
        self.model = Search::model(self.history, self.rules);
        self.progress.iter_mut().for_each(|done| *done = 0);
        self.moved_top = 0;
        self.path.clear();
        for &(thread, _) in &deepest {
            self.advance(thread).expect("the deepest prefix replays");
        }
        let phase = self.current_phase();
        let mut blocked = Vec::new();
        for thread in 0..self.plan.threads.len() {
            let Some(planned) = self.next_step(thread) else {
                continue;
            };
            let entry = self.history.threads[thread].entries[planned.entry].clone();
            let reason = if Some(planned.phase) != phase {
                format!("waits for phase {} to end", phase.unwrap_or(0))
            } else {
                match self.model.apply(&planned.step) {
                    Err(refusal) => describe(&planned.step, planned.part, &refusal),
                    Ok(applied) => {
                        self.model.undo(applied.undo);
                        match self.advance(thread) {
                            Some(arrival) => {
                                self.retreat(arrival);
                                "every order that places it here fails later".to_string()
                            }
                            None => format!(
                                "it would end phase {}, in which a Retry overlaps no operation that moved top",
                                planned.phase
                            ),
                        }
                    }
                }
            };
            blocked.push(Blocked {
                thread,
                entry,
                reason,
            });
        }
        Violation {
            history: self.history.clone(),
            prefix: deepest
                .iter()
                .map(|&(thread, step)| self.plan.placed(thread, step))
                .collect(),
            model: self.model.tasks().collect(),
            blocked,
            states: self.states,
        }
    }
}

fn describe(step: &Step, part: usize, refusal: &Refusal) -> String {
    match step {
        Step::Steal { .. } if part > 0 => {
            format!("single steal number {} of the batch {refusal}", part + 1)
        }
        _ => refusal.to_string(),
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "not linearizable ({:?}, bound {:?}); {} operations in {} threads:",
            self.history.specification.flavor,
            self.history.specification.bound,
            self.history.len(),
            self.history.threads.len()
        )?;
        write!(f, "{}", self.history)?;
        writeln!(
            f,
            "  longest linearizable prefix ({} steps):",
            self.prefix.len()
        )?;
        for placed in &self.prefix {
            let entry = &self.history.threads[placed.thread].entries[placed.entry];
            let part = if placed.part > 0 {
                format!(" (single steal {})", placed.part + 1)
            } else {
                String::new()
            };
            writeln!(f, "    thread {}: {entry}{part}", placed.thread)?;
        }
        writeln!(f, "  deque after it (oldest first): {:?}", self.model)?;
        writeln!(f, "  no operation can come next:")?;
        for blocked in &self.blocked {
            writeln!(
                f,
                "    thread {}: {}: {}",
                blocked.thread, blocked.entry, blocked.reason
            )?;
        }
        writeln!(f, "  ({} search states visited)", self.states)
    }
}

#[cfg(test)]
mod tests {
    //! The search against a brute force that tries every interleaving with
    //! neither memoisation nor the partial-order reduction, on small random
    //! histories (about 2% of them linearizable, so some 450 of the 20,000,
    //! with repeated tasks, `Full`, `Retry` and batches): the two must agree.

    use super::*;
    use crate::history::{Specification, ThreadLog};
    use proptest::prelude::*;

    /// Every interleaving, depth first: the definition, without shortcuts.
    fn brute_force(
        plan: &Plan,
        model: &mut SequentialDeque,
        progress: &mut Vec<u32>,
        moved_top: u64,
    ) -> bool {
        let next = |progress: &Vec<u32>, thread: usize| {
            plan.threads[thread].get(progress[thread] as usize)
        };
        let phase = (0..plan.threads.len())
            .filter_map(|thread| next(progress, thread).map(|s| s.phase))
            .min();
        let Some(phase) = phase else { return true };
        for thread in 0..plan.threads.len() {
            let Some(planned) = next(progress, thread) else {
                continue;
            };
            if planned.phase != phase {
                continue;
            }
            let Ok(applied) = model.apply(&planned.step) else {
                continue;
            };
            let moved = moved_top | (u64::from(applied.moved_top) << thread);
            progress[thread] += 1;
            let still_in_phase = (0..plan.threads.len())
                .filter_map(|t| next(progress, t).map(|s| s.phase))
                .min()
                == Some(phase);
            let found = if still_in_phase {
                brute_force(plan, model, progress, moved)
            } else {
                retries_justified(plan.retrying_in(phase), moved)
                    && brute_force(plan, model, progress, 0)
            };
            progress[thread] -= 1;
            model.undo(applied.undo);
            if found {
                return true;
            }
        }
        false
    }

    fn entry(thread: usize) -> impl Strategy<Value = (Operation, Outcome)> {
        let task = 1..=4u64;
        if thread == 0 {
            prop_oneof![
                task.clone()
                    .prop_map(|task| (Operation::Push(task), Outcome::Pushed)),
                task.clone()
                    .prop_map(|task| (Operation::TryPush(task), Outcome::Full)),
                proptest::option::of(task).prop_map(|task| (Operation::Pop, Outcome::Popped(task))),
            ]
            .boxed()
        } else {
            prop_oneof![
                task.clone()
                    .prop_map(|task| (Operation::Steal, Outcome::Stolen(vec![task]))),
                Just((Operation::Steal, Outcome::Empty)),
                Just((Operation::Steal, Outcome::Retry)),
                (1..=3usize, proptest::collection::vec(task, 1..=3)).prop_map(|(limit, tasks)| (
                    Operation::StealBatch {
                        limit,
                        and_pop: false
                    },
                    Outcome::Stolen(tasks)
                )),
            ]
            .boxed()
        }
    }

    fn thread_log(thread: usize) -> impl Strategy<Value = ThreadLog> {
        proptest::collection::vec((0..3u32, entry(thread)), 0..=4).prop_map(|mut entries| {
            entries.sort_by_key(|(phase, _)| *phase);
            let mut log = ThreadLog::new();
            for (phase, (operation, outcome)) in entries {
                log.record(phase, operation, outcome);
            }
            log
        })
    }

    fn histories() -> impl Strategy<Value = History> {
        let flavor = prop_oneof![Just(Flavor::Lifo), Just(Flavor::Fifo)];
        let bound = proptest::option::of(1..=3usize);
        (flavor, bound, thread_log(0), thread_log(1), thread_log(2)).prop_map(
            |(flavor, bound, owner, first, second)| {
                History::new(Specification { flavor, bound }, vec![owner, first, second])
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 20_000, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn the_search_agrees_with_trying_every_interleaving(history in histories()) {
            let plan = Plan::new(&history);
            let mut model = SequentialDeque::new(history.specification);
            let expected = brute_force(&plan, &mut model, &mut vec![0; plan.threads.len()], 0);
            prop_assert_eq!(check(&history).is_ok(), expected, "{}", history);
        }
    }
}
