//! Scenarios: what the owner and each thief do, round by round, and the
//! proptest strategies that generate (and shrink) them.
//!
//! A run has phases: phase 0, the owner pushes the initial tasks; then one
//! phase per round, in which the owner and the thieves run concurrently
//! (thieves are spawned at the start of the round and joined at its end);
//! and a last phase in which the owner pops until the deque is empty, so that
//! a lost task shows up as a pop that found nothing while the model still
//! holds it.
//!
//! The same language serves every driver: the proptest strategies below (the
//! hardware-thread, shuttle and loom drivers of this package) and the byte
//! decoder of the fuzz target `schedule` (`fuzz/src/schedule.rs`), which runs
//! a scenario through the same [`harness`](crate::harness) with the fuzzer's
//! bytes choosing the interleaving.

use proptest::prelude::*;

use crate::history::Flavor;

/// What the owner does in a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwnerAction {
    /// Push a fresh task (`try_push` on a bounded deque).
    Push,
    /// Pop one task.
    Pop,
}

/// What a thief does in a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThiefAction {
    /// One `steal()`.
    Steal,
    /// One `steal_batch_with_limit` into the thief's own deque, or
    /// `steal_batch` without a limit.
    StealBatch {
        /// The batch's limit; `None` calls `steal_batch`, whose limit is
        /// [`chase_lev::DEFAULT_BATCH_LIMIT`].
        limit: Option<usize>,
    },
    /// One `steal_batch_with_limit_and_pop`, or `steal_batch_and_pop`.
    StealBatchAndPop {
        /// The batch's limit; `None` calls `steal_batch_and_pop`.
        limit: Option<usize>,
    },
}

/// The worker a thief's batch steals go into. Each thief has its own, which
/// nobody else touches; the harness drains it after every batch to read
/// back what the batch took, so it is empty when a batch starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Destination {
    /// `Worker::new_fifo()`: growable, with the default capacity.
    #[default]
    Fifo,
    /// A worker of this flavour and capacity (the bound of a bounded one,
    /// the initial capacity of a growable one), made with the public
    /// constructors and never with a mutant.
    Worker {
        /// Which end its owner pops from.
        flavor: Flavor,
        /// Whether it is bounded.
        bounded: bool,
        /// Its bound or initial capacity.
        capacity: usize,
    },
}

/// One round: the owner's actions and each thief's, run concurrently.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Round {
    /// The owner's actions, in order.
    pub owner: Vec<OwnerAction>,
    /// Each thief's actions, in order (the same number of thieves every round).
    pub thieves: Vec<Vec<ThiefAction>>,
}

/// A complete scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scenario {
    /// Which end the owner pops from.
    pub flavor: Flavor,
    /// Whether the deque is bounded (then `capacity` is its bound).
    pub bounded: bool,
    /// The initial capacity of a growable deque, or the bound of a bounded one.
    pub capacity: usize,
    /// Tasks pushed by the owner before the thieves start.
    pub initial_tasks: usize,
    /// The concurrent rounds.
    pub rounds: Vec<Round>,
    /// Thief `i`'s destination is `destinations[i]`, or
    /// [`Destination::Fifo`] if the list is shorter.
    pub destinations: Vec<Destination>,
}

impl Scenario {
    /// The number of thieves.
    pub fn thieves(&self) -> usize {
        self.rounds.first().map_or(0, |round| round.thieves.len())
    }

    /// Thief `thief`'s destination.
    pub fn destination(&self, thief: usize) -> Destination {
        self.destinations.get(thief).copied().unwrap_or_default()
    }
}

/// The size of the scenarios a strategy generates.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// Thieves (threads besides the owner).
    pub thieves: usize,
    /// At most this many rounds (at least one).
    pub rounds: usize,
    /// At most this many owner actions per round.
    pub owner_actions: usize,
    /// At most this many actions per thief per round.
    pub thief_actions: usize,
    /// At most this many initial tasks.
    pub initial_tasks: usize,
    /// At most this capacity; small values keep growth and shrinking in play.
    pub capacity: usize,
    /// How often the owner pops, against 3 for pushes (2 lets the deque
    /// grow past a small capacity; 3 keeps it near empty).
    pub pop_weight: u32,
    /// `None`: every thief's destination is [`Destination::Fifo`];
    /// `Some(n)`: each thief's has a generated flavour, boundedness and a
    /// capacity of at most `n`.
    pub destination_capacity: Option<usize>,
}

impl Shape {
    /// Scenarios for hardware threads: 3 thieves, enough work per round for
    /// the threads to overlap.
    pub fn hardware() -> Shape {
        Shape {
            thieves: 3,
            rounds: 3,
            owner_actions: 64,
            thief_actions: 32,
            initial_tasks: 24,
            capacity: 4,
            pop_weight: 2,
            destination_capacity: None,
        }
    }

    /// Scenarios for shuttle: 4 thieves (5 threads), short rounds, so that a
    /// schedule is cheap and thousands of them fit in a test.
    pub fn shuttle() -> Shape {
        Shape {
            thieves: 4,
            rounds: 2,
            owner_actions: 10,
            thief_actions: 4,
            initial_tasks: 8,
            capacity: 4,
            pop_weight: 2,
            destination_capacity: None,
        }
    }
}

fn owner_action(pop_weight: u32) -> impl Strategy<Value = OwnerAction> {
    // With more pushes than pops the deque grows past a small capacity; the
    // final drain and the pops make it shrink again.
    prop_oneof![3 => Just(OwnerAction::Push), pop_weight => Just(OwnerAction::Pop)]
}

fn batch_limit() -> impl Strategy<Value = Option<usize>> {
    prop_oneof![1..=4usize, Just(chase_lev::DEFAULT_BATCH_LIMIT)].prop_map(Some)
}

fn thief_action() -> impl Strategy<Value = ThiefAction> {
    prop_oneof![
        3 => Just(ThiefAction::Steal),
        1 => batch_limit().prop_map(|limit| ThiefAction::StealBatch { limit }),
        1 => batch_limit().prop_map(|limit| ThiefAction::StealBatchAndPop { limit }),
    ]
}

fn round(shape: Shape) -> impl Strategy<Value = Round> {
    let owner = proptest::collection::vec(owner_action(shape.pop_weight), 0..=shape.owner_actions);
    let thief = proptest::collection::vec(thief_action(), 0..=shape.thief_actions);
    let thieves = proptest::collection::vec(thief, shape.thieves);
    (owner, thieves).prop_map(|(owner, thieves)| Round { owner, thieves })
}

fn flavor() -> impl Strategy<Value = Flavor> {
    prop_oneof![Just(Flavor::Lifo), Just(Flavor::Fifo)]
}

fn destinations(shape: Shape) -> BoxedStrategy<Vec<Destination>> {
    match shape.destination_capacity {
        // No draw at all: the scenarios are those of a shape without the field.
        None => Just(Vec::new()).boxed(),
        Some(most) => {
            let destination = (flavor(), any::<bool>(), 1..=most.max(1)).prop_map(
                |(flavor, bounded, capacity)| Destination::Worker {
                    flavor,
                    bounded,
                    capacity,
                },
            );
            proptest::collection::vec(destination, shape.thieves).boxed()
        }
    }
}

/// Scenarios of the given shape, with every flavour and both bounded and
/// growable deques.
pub fn scenarios(shape: Shape) -> impl Strategy<Value = Scenario> {
    (
        flavor(),
        proptest::bool::weighted(0.25),
        1..=shape.capacity.max(1),
        0..=shape.initial_tasks,
        proptest::collection::vec(round(shape), 1..=shape.rounds.max(1)),
        destinations(shape),
    )
        .prop_map(
            |(flavor, bounded, capacity, initial_tasks, rounds, destinations)| Scenario {
                flavor,
                bounded,
                capacity,
                initial_tasks,
                rounds,
                destinations,
            },
        )
}
