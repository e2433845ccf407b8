//! Batch steals into a *bounded* destination, which crossbeam-deque does not
//! have: chase-lev takes as many as fit, so a batch into a destination with
//! room for `r` tasks must do exactly what crossbeam-deque 0.8 does with a
//! limit of `r` (one more for `steal_batch_and_pop`, whose returned task
//! needs no room), for every flavour pair, victim length, limit and room.
//! With no room at all, `steal_batch` moves nothing and returns `Success(())`
//! if the victim had a task (the destination, full, has tasks to pop), or
//! `Empty` if the victim was empty.
#![cfg(not(miri))]

/// The observable result of one batch steal: the `Steal` (with the returned
/// task), then what the destination's owner pops, then what the victim's
/// owner pops.
type Observed = (String, Vec<u32>, Vec<u32>);

macro_rules! observe {
    ($krate:ident, $victim_fifo:expr, $dest_fifo:expr, $victim_len:expr, $own:expr, $call:expr) => {{
        use $krate::{Steal, Worker};
        let make = |fifo: bool| -> Worker<u32> {
            if fifo {
                Worker::new_fifo()
            } else {
                Worker::new_lifo()
            }
        };
        let victim = make($victim_fifo);
        (1..=$victim_len).for_each(|task| victim.push(task));
        let dest = make($dest_fifo);
        (1000..1000 + $own).for_each(|task| dest.push(task));
        let call: &dyn Fn(&$krate::Stealer<u32>, &Worker<u32>) -> Steal<u32> = &$call;
        let result = format!("{:?}", call(&victim.stealer(), &dest).success());
        let popped = |w: &Worker<u32>| std::iter::from_fn(|| w.pop()).collect::<Vec<_>>();
        (result, popped(&dest), popped(&victim))
    }};
}

/// chase-lev with a bounded destination of `bound` slots already holding
/// `own` tasks.
fn chase_lev_bounded(
    victim_fifo: bool,
    dest_fifo: bool,
    victim_len: u32,
    own: u32,
    bound: usize,
    limit: usize,
    and_pop: bool,
) -> Observed {
    use chase_lev::{Steal, Worker};
    let make = |fifo: bool, bound: Option<usize>| -> Worker<u32> {
        match (fifo, bound) {
            (true, Some(b)) => Worker::new_fifo_bounded(b),
            (false, Some(b)) => Worker::new_lifo_bounded(b),
            (true, None) => Worker::new_fifo(),
            (false, None) => Worker::new_lifo(),
        }
    };
    let victim = make(victim_fifo, None);
    (1..=victim_len).for_each(|task| victim.push(task));
    let dest = make(dest_fifo, Some(bound));
    (1000..1000 + own).for_each(|task| dest.try_push(task).unwrap());
    let stealer = victim.stealer();
    let result = if and_pop {
        format!(
            "{:?}",
            stealer
                .steal_batch_with_limit_and_pop(&dest, limit)
                .success()
        )
    } else {
        match stealer.steal_batch_with_limit(&dest, limit) {
            Steal::Success(()) => "Some(())".to_string(),
            other => format!("{:?}", other.success()),
        }
    };
    let popped = |w: &Worker<u32>| std::iter::from_fn(|| w.pop()).collect::<Vec<_>>();
    (result, popped(&dest), popped(&victim))
}

#[test]
fn a_bounded_destination_behaves_like_crossbeam_with_its_room_as_the_limit() {
    let mut compared = 0;
    for victim_fifo in [false, true] {
        for dest_fifo in [false, true] {
            for victim_len in 0..=20u32 {
                for (bound, own) in [(1, 0), (1, 1), (3, 1), (4, 0), (8, 5), (8, 8)] {
                    let room = bound - own as usize;
                    for limit in [1, 2, 3, chase_lev::DEFAULT_BATCH_LIMIT, usize::MAX] {
                        for and_pop in [false, true] {
                            let ours = chase_lev_bounded(
                                victim_fifo,
                                dest_fifo,
                                victim_len,
                                own,
                                bound,
                                limit,
                                and_pop,
                            );
                            let effective = if and_pop {
                                limit.min(room + 1)
                            } else {
                                limit.min(room)
                            };
                            let theirs = if effective == 0 {
                                // No room and nothing to return: chase-lev
                                // leaves everything in place, and returns
                                // `Success(())` unless the victim was empty
                                // (the full destination has tasks to pop).
                                let (_, dest, victim) = observe!(
                                    crossbeam_deque,
                                    victim_fifo,
                                    dest_fifo,
                                    victim_len,
                                    own,
                                    |_, _| crossbeam_deque::Steal::Empty
                                );
                                let result = if victim_len > 0 { "Some(())" } else { "None" };
                                (result.to_string(), dest, victim)
                            } else if and_pop {
                                observe!(
                                    crossbeam_deque,
                                    victim_fifo,
                                    dest_fifo,
                                    victim_len,
                                    own,
                                    |s, d| s.steal_batch_with_limit_and_pop(d, effective)
                                )
                            } else {
                                let (result, dest, victim) = observe!(
                                    crossbeam_deque,
                                    victim_fifo,
                                    dest_fifo,
                                    victim_len,
                                    own,
                                    |s, d| s.steal_batch_with_limit(d, effective).map_unit()
                                );
                                (result.replace("Some(0)", "Some(())"), dest, victim)
                            };
                            assert_eq!(
                                ours,
                                theirs,
                                "victim {}, destination {}, {victim_len} tasks, bound {bound} \
                                 holding {own}, limit {limit}, and_pop {and_pop}",
                                if victim_fifo { "FIFO" } else { "LIFO" },
                                if dest_fifo { "FIFO" } else { "LIFO" },
                            );
                            compared += 1;
                        }
                    }
                }
            }
        }
    }
    assert_eq!(compared, 2 * 2 * 21 * 6 * 5 * 2);
}

/// `Steal<()>` as a `Steal<u32>`, so both kinds of batch share one observer.
trait MapUnit {
    fn map_unit(self) -> crossbeam_deque::Steal<u32>;
}

impl MapUnit for crossbeam_deque::Steal<()> {
    fn map_unit(self) -> crossbeam_deque::Steal<u32> {
        match self {
            crossbeam_deque::Steal::Success(()) => crossbeam_deque::Steal::Success(0),
            crossbeam_deque::Steal::Empty => crossbeam_deque::Steal::Empty,
            crossbeam_deque::Steal::Retry => crossbeam_deque::Steal::Retry,
        }
    }
}
