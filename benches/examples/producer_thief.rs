//! One producer pushing while one thief steals, outside the compare bench:
//! st3, chase-lev as shipped (`Worker::new_lifo`, 256 slots, and
//! `new_lifo_with_capacity(65536)`), and the steal of Lê et al. written out bare (a
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
//! read the lower group against the lower group. Then chase-lev's fastest
//! round over the bare fenced ring's, turn by turn (the median of the
//! turns' ratios with its interval), against the target "at most 1.05",
//! also written to `target/steal-vs-bare.tsv` for the compare bench's
//! targets table.

use std::hint::black_box;
use std::sync::atomic::{fence, AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use chase_lev_bench::contenders::{ChaseLev, Contender, St3, Taken};
use chase_lev_bench::paired::{write_rows, Interval, Row};
use chase_lev_bench::{target_file, wait_until};
use crossbeam_utils::CachePadded;

const TASKS: u64 = 10_000;
const ROUNDS: usize = 400;

/// chase-lev's steal over the bare paper steal: at most 5% above it.
const STEAL_TARGET: f64 = 1.05;

/// Where the figure goes for the compare bench's targets table (in the
/// target directory).
const STEAL_VS_BARE_FILE: &str = "steal-vs-bare.tsv";

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

/// A thief of one of the compare bench's contenders, with a deque of its
/// own (`Contender::steal`'s scratch, or the destination of its batches,
/// which it pops first), as the compare bench's thieves do.
struct ContenderThief<C: Contender> {
    thief: C::Thief,
    mine: C::Owner,
    batch: bool,
}

impl<C: Contender> Thief for ContenderThief<C> {
    #[inline(always)]
    fn steal(&self) -> Option<Option<u64>> {
        if self.batch {
            if let Some(task) = C::pop(&self.mine) {
                return Some(Some(task));
            }
        }
        let taken = if self.batch {
            C::steal_batch_and_pop(&self.thief, &self.mine)
        } else {
            C::steal(&self.thief, &self.mine)
        };
        match taken {
            Taken::Task(task) => Some(Some(task)),
            Taken::Retry => Some(None),
            Taken::Empty => None,
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

/// `run` for one of the contenders' deques, `owner`, and a thief of it.
fn run_contender<C: Contender>(owner: C::Owner, batch: bool) -> f64 {
    let thief = ContenderThief::<C> {
        thief: C::thief(&owner),
        mine: C::owner(64),
        batch,
    };
    run(thief, |task| C::push(&owner, task))
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
        // st3 is bounded: room for a whole round, twice.
        figures[0].push(run_contender::<St3>(St3::owner(2 * TASKS as usize), false));
        figures[1].push(run_contender::<ChaseLev>(ChaseLev::owner(0), false));
        let fenced = BareRing::<true>::new();
        figures[2].push(run(&fenced, |task| fenced.push(task)));
        let unfenced = BareRing::<false>::new();
        figures[3].push(run(&unfenced, |task| unfenced.push(task)));
        let sized = chase_lev::Worker::new_lifo_with_capacity(1 << 16);
        figures[4].push(run_contender::<ChaseLev>(sized, false));
        figures[5].push(run_contender::<St3>(St3::owner(2 * TASKS as usize), true));
        figures[6].push(run_contender::<ChaseLev>(ChaseLev::owner(0), true));
    }
    // chase-lev as shipped against the bare paper steal with its fence, turn
    // by turn (the two run one after the other in every turn).
    let against_bare = Interval::of(
        figures[1]
            .iter()
            .zip(&figures[2])
            .map(|(ours, bare)| ours / bare)
            .collect(),
    );
    println!("1 producer + 1 thief, fastest round of each turn (ns per task), in order:");
    for (name, mut values) in names.into_iter().zip(figures) {
        values.sort_by(f64::total_cmp);
        let shown: Vec<String> = values.iter().map(|ns| format!("{ns:.2}")).collect();
        println!("  {name:<24} {}", shown.join(" "));
    }
    println!(
        "chase-lev's steal / the bare paper steal (with its fence), turn by turn: {} {} (target <= {STEAL_TARGET})",
        against_bare.show(),
        against_bare.verdict(STEAL_TARGET)
    );
    write_rows(
        &target_file(STEAL_VS_BARE_FILE),
        &format!("producer_thief example, {turns} turns of {ROUNDS} rounds of {TASKS} tasks"),
        &[Row {
            label: "1 producer + 1 thief: chase-lev's steal / the bare paper steal".into(),
            target: STEAL_TARGET,
            interval: against_bare,
        }],
    );
}
