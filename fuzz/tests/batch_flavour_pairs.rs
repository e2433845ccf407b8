//! The schedule target's oracle rebuilds each batch steal's claim order from
//! what the thief's destination holds; that depends on both flavours, since
//! a batch leaves the destination popping in the victim owner's order
//! (crossbeam-deque's arrangement). Every flavour pair and both kinds of
//! batch, with a schedule that lets the thief run alone, must come out
//! linearizable and exactly-once.

use chase_lev_fuzz::schedule::{self, Scenario, ScheduleInput, Thief, ThiefStep};

#[test]
fn every_flavour_pair_of_batch_steals_is_read_back_in_claim_order() {
    for fifo in [false, true] {
        for destination_fifo in [false, true] {
            for destination_bounded in [false, true] {
                let input = ScheduleInput {
                    scenario: Scenario {
                        fifo,
                        bounded: false,
                        capacity: 7,
                        prefill: 8,
                        owner: vec![],
                        thieves: vec![Thief {
                            destination_fifo,
                            destination_bounded,
                            destination_capacity: 3,
                            steps: vec![
                                ThiefStep::StealBatchAndPop { limit: None },
                                ThiefStep::StealBatch { limit: Some(2) },
                                ThiefStep::StealBatchAndPop { limit: Some(3) },
                            ],
                        }],
                    },
                    choices: vec![0; 64],
                };
                schedule::run(&input);
            }
        }
    }
}
