//! A shuttle [`Scheduler`] whose choices are the fuzzer's bytes.
//!
//! At every scheduling point with more than one runnable task, the next byte
//! picks one of them (modulo their number). libFuzzer mutates the bytes and
//! keeps those that reach new coverage in the deque, so it steers towards new
//! interleavings, which a random scheduler only samples. When the bytes run
//! out, the running task keeps running (no more preemptions), so every
//! execution finishes however short the input.
//!
//! A scheduling point with one runnable task consumes no byte: every byte is a
//! real choice, which keeps inputs short and mutations meaningful.

use shuttle::scheduler::{Schedule, Scheduler, Task, TaskId};

#[derive(Debug)]
pub struct ByteScheduler {
    choices: Vec<u8>,
    next_choice: usize,
    executions_left: usize,
}

impl ByteScheduler {
    /// A scheduler for one execution, choosing with `choices`.
    pub fn new(choices: Vec<u8>) -> Self {
        ByteScheduler {
            choices,
            next_choice: 0,
            executions_left: 1,
        }
    }
}

impl Scheduler for ByteScheduler {
    fn new_execution(&mut self) -> Option<Schedule> {
        if self.executions_left == 0 {
            return None;
        }
        self.executions_left -= 1;
        self.next_choice = 0;
        // The seed only feeds `shuttle::rand`, which the scenario does not use.
        Some(Schedule::new(0))
    }

    fn next_task(
        &mut self,
        runnable_tasks: &[&Task],
        current_task: Option<TaskId>,
        _is_yielding: bool,
    ) -> Option<TaskId> {
        if runnable_tasks.len() == 1 {
            return Some(runnable_tasks[0].id());
        }
        if let Some(&choice) = self.choices.get(self.next_choice) {
            self.next_choice += 1;
            return Some(runnable_tasks[usize::from(choice) % runnable_tasks.len()].id());
        }
        let keep_running = runnable_tasks
            .iter()
            .map(|task| task.id())
            .find(|&id| Some(id) == current_task);
        Some(keep_running.unwrap_or_else(|| runnable_tasks[0].id()))
    }

    fn next_u64(&mut self) -> u64 {
        0
    }
}
