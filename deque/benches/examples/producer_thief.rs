//! One producer pushing while one thief steals, outside the compare bench:
//! st3, chase-lev as shipped (`Worker::new_lifo`, 256 slots, and
//! `with_capacity(65536)`), and the steal of Lê et al. written out bare (a
//! fixed ring, no reclamation, no empty look), with and without its SeqCst
//! fence. The bare ring says how much of the gap to st3 is the paper's
//! algorithm and how much is what chase-lev adds to it. Without the fence
//! it is incorrect (a thief and a popping owner can both take the last
//! task); it is measured here only because this scenario never pops.
//! Then st3 and chase-lev with the thief batch-stealing into a deque of its
//! own, as the compare bench's producer row does: from a LIFO worker
//! chase-lev claims each task of a batch with its own fence and CAS
//! (proofs-notes/linearizability.md#batch-steal), st3 a batch with one CAS.
//!
//! `cargo run --release -p chase-lev-bench --example producer_thief`: the
//! seven take turns, `PRODUCER_THIEF_TURNS` turns (default 8) of 400 rounds,
//! each round 10,000 pushes and as many steals; per turn the fastest round,
//! in ns per task. The turns' figures are printed in order of size: on this
//! 2-core machine they fall in two groups (the two threads' placement), so
//! read the lower group against the lower group.

use std::hint::black_box;
use std::sync::atomic::{fence, AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use chase_lev_bench::wait_until;
use crossbeam_utils::CachePadded;

const TASKS: u64 = 10_000;
const ROUNDS: usize = 400;

/// A thief's steal: `Some(Some(task))`, `Some(None)` for a lost race,
/// `None` for empty.
trait Thief: Send {
    fn steal(&self) -> Option<Option<u64>>;
}

/// The paper's deque reduced to this scenario: a ring that never fills
/// (the producer is never more than `TASKS` ahead), the owner's push, the
/// thief's steal. Slots are relaxed atomics so that the example needs no
/// `unsafe`: on x86-64 they compile to the plain moves of a real slot.
struct BareRing<const FENCE: bool> {
    top: CachePadded<AtomicI64>,
    bottom: CachePadded<AtomicI64>,
    slots: Box<[AtomicU64]>,
}

const RING: usize = 1 << 16;

impl<const FENCE: bool> BareRing<FENCE> {
    fn new() -> Self {
        BareRing {
            top: CachePadded::new(AtomicI64::new(0)),
            bottom: CachePadded::new(AtomicI64::new(0)),
            slots: (0..RING).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    #[inline(always)]
    fn push(&self, task: u64) {
        let bottom = self.bottom.load(Ordering::Relaxed);
        self.slots[bottom as usize % RING].store(task, Ordering::Relaxed);
        fence(Ordering::Release);
        self.bottom.store(bottom + 1, Ordering::Relaxed);
    }
}

impl<const FENCE: bool> Thief for &BareRing<FENCE> {
    #[inline(never)]
    fn steal(&self) -> Option<Option<u64>> {
        let top = self.top.load(Ordering::Acquire);
        if FENCE {
            fence(Ordering::SeqCst);
        }
        let bottom = self.bottom.load(Ordering::Acquire);
        if top >= bottom {
            return None;
        }
        let task = self.slots[top as usize % RING].load(Ordering::Relaxed);
        let won = self
            .top
            .compare_exchange(top, top + 1, Ordering::SeqCst, Ordering::Relaxed)
            .is_ok();
        Some(won.then_some(task))
    }
}

impl Thief for chase_lev::Stealer<u64> {
    #[inline(always)]
    fn steal(&self) -> Option<Option<u64>> {
        match chase_lev::Stealer::steal(self) {
            chase_lev::Steal::Success(task) => Some(Some(task)),
            chase_lev::Steal::Retry => Some(None),
            chase_lev::Steal::Empty => None,
        }
    }
}

/// st3 steals into a worker of the thief's own.
struct St3Thief {
    stealer: st3::lifo::Stealer<u64>,
    scratch: st3::lifo::Worker<u64>,
}

impl Thief for St3Thief {
    #[inline(always)]
    fn steal(&self) -> Option<Option<u64>> {
        match self.stealer.steal_and_pop(&self.scratch, |_| 1) {
            Ok((task, _)) => Some(Some(task)),
            Err(st3::StealError::Busy) => Some(None),
            Err(st3::StealError::Empty) => None,
        }
    }
}

/// A thief that batch-steals into a deque of its own and pops that first,
/// as the compare bench's producer row does: `steal_batch_and_pop`, or
/// st3's `steal_and_pop` of half the tasks (at most 32, the bench's limit).
struct ChaseLevBatch {
    stealer: chase_lev::Stealer<u64>,
    mine: chase_lev::Worker<u64>,
}

impl Thief for ChaseLevBatch {
    #[inline(always)]
    fn steal(&self) -> Option<Option<u64>> {
        if let Some(task) = self.mine.pop() {
            return Some(Some(task));
        }
        match self.stealer.steal_batch_and_pop(&self.mine) {
            chase_lev::Steal::Success(task) => Some(Some(task)),
            chase_lev::Steal::Retry => Some(None),
            chase_lev::Steal::Empty => None,
        }
    }
}

struct St3Batch(St3Thief);

impl Thief for St3Batch {
    #[inline(always)]
    fn steal(&self) -> Option<Option<u64>> {
        let St3Batch(thief) = self;
        if let Some(task) = thief.scratch.pop() {
            return Some(Some(task));
        }
        match thief
            .stealer
            .steal_and_pop(&thief.scratch, |available| available.div_ceil(2).min(32))
        {
            Ok((task, _)) => Some(Some(task)),
            Err(st3::StealError::Busy) => Some(None),
            Err(st3::StealError::Empty) => None,
        }
    }
}

struct Stage {
    round: CachePadded<AtomicU64>,
    finished: CachePadded<AtomicU64>,
    quit: AtomicBool,
}

/// `ROUNDS` rounds of `TASKS` pushes by this thread while one thief steals
/// them all; returns the fastest round in ns per task.
fn run(thief: impl Thief, push: impl Fn(u64)) -> f64 {
    let stage = Stage {
        round: CachePadded::new(AtomicU64::new(0)),
        finished: CachePadded::new(AtomicU64::new(0)),
        quit: AtomicBool::new(false),
    };
    let mut fastest = Duration::MAX;
    std::thread::scope(|scope| {
        let stage = &stage;
        scope.spawn(move || {
            let mut seen = 0;
            loop {
                wait_until(|| {
                    stage.round.load(Ordering::Acquire) != seen
                        || stage.quit.load(Ordering::Acquire)
                });
                if stage.quit.load(Ordering::Acquire) {
                    break;
                }
                seen = stage.round.load(Ordering::Acquire);
                let mut taken = 0;
                while taken < TASKS {
                    match thief.steal() {
                        Some(Some(task)) => {
                            black_box(task);
                            taken += 1;
                        }
                        _ => std::hint::spin_loop(),
                    }
                }
                stage.finished.store(seen, Ordering::Release);
            }
        });
        for round in 1..=ROUNDS as u64 {
            let start = Instant::now();
            stage.round.store(round, Ordering::Release);
            for task in 0..TASKS {
                push(black_box(task));
            }
            wait_until(|| stage.finished.load(Ordering::Acquire) == round);
            fastest = fastest.min(start.elapsed());
        }
        stage.quit.store(true, Ordering::Release);
    });
    fastest.as_secs_f64() * 1e9 / TASKS as f64
}

fn run_st3(batch: bool) -> f64 {
    let worker = st3::lifo::Worker::new(2 * TASKS as usize);
    let thief = St3Thief {
        stealer: worker.stealer(),
        scratch: st3::lifo::Worker::new(256),
    };
    let push = |task| {
        if worker.push(task).is_err() {
            panic!("st3 sized too small")
        }
    };
    if batch {
        run(St3Batch(thief), push)
    } else {
        run(thief, push)
    }
}

fn main() {
    let turns: usize = std::env::var("PRODUCER_THIEF_TURNS")
        .map(|text| text.parse().expect("PRODUCER_THIEF_TURNS is a number"))
        .unwrap_or(8);
    let names = [
        "st3",
        "chase-lev",
        "bare ring, fence",
        "bare ring, no fence",
        "chase-lev, 65536 slots",
        "st3, batch",
        "chase-lev, batch",
    ];
    let mut figures: [Vec<f64>; 7] = Default::default();
    for _ in 0..turns {
        figures[0].push(run_st3(false));
        let worker = chase_lev::Worker::new_lifo();
        figures[1].push(run(worker.stealer(), |task| worker.push(task)));
        let fenced = BareRing::<true>::new();
        figures[2].push(run(&fenced, |task| fenced.push(task)));
        let unfenced = BareRing::<false>::new();
        figures[3].push(run(&unfenced, |task| unfenced.push(task)));
        let sized = chase_lev::Worker::with_capacity(1 << 16);
        figures[4].push(run(sized.stealer(), |task| sized.push(task)));
        figures[5].push(run_st3(true));
        let worker = chase_lev::Worker::new_lifo();
        let thief = ChaseLevBatch {
            stealer: worker.stealer(),
            mine: chase_lev::Worker::new_lifo(),
        };
        figures[6].push(run(thief, |task| worker.push(task)));
    }
    println!("1 producer + 1 thief, fastest round of each turn (ns per task), in order:");
    for (name, mut values) in names.into_iter().zip(figures) {
        values.sort_by(f64::total_cmp);
        let shown: Vec<String> = values.iter().map(|ns| format!("{ns:.2}")).collect();
        println!("  {name:<24} {}", shown.join(" "));
    }
}
