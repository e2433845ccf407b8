//! The harness reads each batch steal's claim order back from what the
//! thief's destination pops; that pop order must not depend on the
//! destination's flavour, since a batch leaves the destination popping in
//! the victim owner's order (crossbeam-deque's arrangement). Every flavour
//! pair, bounded and growable destinations, and both kinds of batch, with a
//! schedule that lets the thief run alone, must come out linearizable and
//! exactly-once.

use chase_lev_fuzz::schedule::{self, ScheduleInput};
use chase_lev_tests::history::Flavor;
use chase_lev_tests::scenario::{Destination, Round, Scenario, ThiefAction};

#[test]
fn every_flavour_pair_of_batch_steals_is_read_back_in_claim_order() {
    for flavor in [Flavor::Lifo, Flavor::Fifo] {
        for destination_flavor in [Flavor::Lifo, Flavor::Fifo] {
            for bounded in [false, true] {
                let input = ScheduleInput {
                    scenario: Scenario {
                        flavor,
                        bounded: false,
                        capacity: 8,
                        initial_tasks: 8,
                        rounds: vec![Round {
                            owner: vec![],
                            thieves: vec![vec![
                                ThiefAction::StealBatchAndPop { limit: None },
                                ThiefAction::StealBatch { limit: Some(2) },
                                ThiefAction::StealBatchAndPop { limit: Some(3) },
                            ]],
                        }],
                        destinations: vec![Destination::Worker {
                            flavor: destination_flavor,
                            bounded,
                            capacity: 3,
                        }],
                    },
                    choices: vec![0; 64],
                };
                schedule::run(&input);
            }
        }
    }
}
