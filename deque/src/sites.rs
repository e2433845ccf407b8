//! The ordering sites, and (in the internal mutant builds only) the mutants
//! that weaken them.
//!
//! Each ordering and fence of the algorithm is written at its site as
//! `site!(Site, correct)`, as in `inner.top.load(site!(StealTopAcquire,
//! Acquire))` or `site!(StealFence, fence(SeqCst))`. Every build that ships
//! compiles it to `correct` alone: the machine code is exactly that of the
//! orderings written bare.
//!
//! The internal mutant builds (`--cfg chase_lev_mutants`, set by
//! `model-tests/builds/build.rs` for those packages only, never by a cargo
//! feature) compile the same source. There a site asks, when it runs, which
//! mutant is active and returns its weakening (the mutant's `weakens:` line
//! in `model-tests/mutants.md`, from which the build script generates the
//! `Mutant` enum and its tables), and a logic mutant is a branch of its own,
//! `#[cfg(chase_lev_mutants)] if mutant!(Name) { .. }`, beside the code it
//! changes. Nothing else in the source knows a mutant.

#[cfg(chase_lev_mutants)]
pub(crate) use mutants::by_site;
#[cfg(chase_lev_mutants)]
pub use mutants::{joint_relaxation, Mutant};

/// An ordering or fence of the algorithm, at its site: `correct` in every
/// build that ships. In a mutant build, the active mutant's weakening of
/// it (see the module's documentation).
#[cfg(not(chase_lev_mutants))]
macro_rules! site {
    ($site:ident, $correct:expr) => {
        $correct
    };
}

/// (Mutant builds.) A site asks the active mutant for its ordering; a fence
/// a mutant removes is not issued.
#[cfg(chase_lev_mutants)]
macro_rules! site {
    ($site:ident, $fence:ident($ordering:expr)) => {
        if let Some(ordering) =
            $crate::sites::fence_ordering($crate::sites::by_site::$site, $ordering)
        {
            // Ordering: the site's own, or the active mutant's weakening of
            // it (proofs-notes/obligations.md#mutation-matrix).
            $fence(ordering)
        }
    };
    ($site:ident, $correct:expr) => {
        $crate::sites::ordering($crate::sites::by_site::$site, $correct)
    };
}
pub(crate) use site;

/// (Mutant builds.) Whether the logic mutant `Name` is active, for its
/// branch: `#[cfg(chase_lev_mutants)] if mutant!(Name) { .. }`.
#[cfg(chase_lev_mutants)]
macro_rules! mutant {
    ($mutant:ident) => {
        $crate::sites::is_active($crate::sites::Mutant::$mutant)
    };
}
#[cfg(chase_lev_mutants)]
pub(crate) use mutant;

/// The ordering of every owner store to `bottom`: Relaxed, as in Lê et al.,
/// published by the release fence in push. ThreadSanitizer does not model
/// fences, so the build made for it (`--cfg chase_lev_sanitize_thread`, see
/// `.ci/run`) uses Release stores, which it does understand.
pub(crate) const RELAXED_UNLESS_TSAN: crate::sync::Ordering = if cfg!(chase_lev_sanitize_thread) {
    crate::sync::Ordering::Release
} else {
    crate::sync::Ordering::Relaxed
};

#[cfg(chase_lev_mutants)]
pub(crate) use active::{enter, fence_ordering, is_active, mutant_of_a_new_deque, ordering};

/// (Mutant builds.) Which mutant is active.
///
/// A deque carries the mutant it was made with (`Worker::new_mutant`,
/// `Injector::new_mutant`; the public constructors plant the one named by
/// `CHASE_LEV_MUTANT`, if any). Each of its operations makes that mutant the
/// active one of the OS thread it runs on, and leaves it so: the sites of
/// the hazard registry, which belongs to no deque, then see the mutant of
/// the thread's last deque, even in a thread's exit. Loom and shuttle run
/// every thread of a model on the OS thread that started it, where every
/// deque of a model carries the same mutant. Under GenMC the mutant is the
/// one the scenarios were compiled with (`CHASE_LEV_GENMC_MUTANT`), as this
/// GenMC reads neither the environment nor thread-locals reliably.
#[cfg(chase_lev_mutants)]
mod active {
    #[cfg(not(chase_lev_genmc))]
    use super::mutants::joint_relaxation;
    use super::mutants::{decode, encode, Mutant, COMBINES, FENCE, WEAKENS};
    use crate::sync::Ordering;

    #[cfg(not(chase_lev_genmc))]
    std::thread_local! {
        static ACTIVE: core::cell::Cell<Option<Mutant>> = const { core::cell::Cell::new(None) };
        /// The mutant the next deque made on this thread carries, set by
        /// `new_mutant` for the constructor it calls.
        static NEXT: core::cell::Cell<Option<Option<Mutant>>> = const { core::cell::Cell::new(None) };
    }

    /// Makes `mutant` the active one of this OS thread (an operation of a
    /// deque that carries it begins).
    #[inline(always)]
    pub(crate) fn enter(mutant: Option<Mutant>) {
        #[cfg(not(chase_lev_genmc))]
        ACTIVE.with(|active| active.set(mutant));
        #[cfg(chase_lev_genmc)]
        let _ = mutant;
    }

    /// The mutant a deque made now carries: the one `new_mutant` asked for,
    /// else the one `CHASE_LEV_MUTANT` plants. It is active from then on.
    pub(crate) fn mutant_of_a_new_deque() -> Option<Mutant> {
        #[cfg(not(chase_lev_genmc))]
        let mutant = NEXT
            .with(|next| next.take())
            .unwrap_or_else(planted_by_environment);
        #[cfg(chase_lev_genmc)]
        let mutant = active();
        enter(mutant);
        mutant
    }

    /// `new_mutant`'s: the next deque made on this thread carries `mutant`.
    pub(crate) fn make_the_next_deque_carry(mutant: Option<Mutant>) {
        #[cfg(not(chase_lev_genmc))]
        NEXT.with(|next| next.set(Some(mutant)));
        #[cfg(chase_lev_genmc)]
        let _ = mutant;
    }

    /// The mutant named by `CHASE_LEV_MUTANT`, read once (how
    /// `fuzz/planted-bug.sh` plants a bug in a harness that uses only the
    /// public API).
    #[cfg(not(chase_lev_genmc))]
    fn planted_by_environment() -> Option<Mutant> {
        static PLANTED: std::sync::OnceLock<Option<Mutant>> = std::sync::OnceLock::new();
        *PLANTED.get_or_init(|| {
            let name = std::env::var("CHASE_LEV_MUTANT").ok()?;
            Some(Mutant::from_name(&name).unwrap_or_else(|| {
                panic!("CHASE_LEV_MUTANT={name}: no such mutant in model-tests/mutants.md")
            }))
        })
    }

    #[inline(always)]
    fn active() -> Option<Mutant> {
        #[cfg(not(chase_lev_genmc))]
        return ACTIVE.with(core::cell::Cell::get);
        #[cfg(chase_lev_genmc)]
        return option_env!("CHASE_LEV_GENMC_MUTANT")
            .map(|name| Mutant::from_name(name).expect("CHASE_LEV_GENMC_MUTANT names a mutant"));
    }

    /// Whether `mutant` is the active one.
    #[inline(always)]
    pub(crate) fn is_active(mutant: Mutant) -> bool {
        active() == Some(mutant)
    }

    /// The (from, to) pairs that weaken the sites of `mutant` now: its
    /// `weakens:` line when it is the active mutant; else the level the
    /// joint relaxation put in place, if any.
    fn weakenings(mutant: Mutant) -> (&'static [(u8, u8)], bool) {
        if let Some(active) = active() {
            if active == mutant || COMBINES[active as usize].contains(&mutant) {
                return (WEAKENS[mutant as usize], true);
            }
        }
        #[cfg(not(chase_lev_genmc))]
        return (joint_relaxation::pairs(mutant), false);
        #[cfg(chase_lev_genmc)]
        return (&[], false);
    }

    /// The weakening of a site whose shipped value is `from`. The active
    /// mutant must weaken every site of its own (`weakens:` names a pair
    /// for each shipped value, as the build script checks).
    fn weakened(mutant: Mutant, from: u8) -> Option<u8> {
        let (pairs, active) = weakenings(mutant);
        let found = pairs.iter().find(|(pair_from, _)| *pair_from == from);
        assert!(
            found.is_some() || !active,
            "mutant {}: no `weakens:` pair for a site of its own (model-tests/mutants.md)",
            mutant.name()
        );
        found.map(|&(_, to)| to)
    }

    /// The ordering of a site of `mutant` whose shipped ordering is `correct`.
    #[inline(always)]
    pub(crate) fn ordering(mutant: Mutant, correct: Ordering) -> Ordering {
        weakened(mutant, encode(correct)).map_or(correct, decode)
    }

    /// The ordering of a fence site of `mutant` whose shipped fence is
    /// `fence(correct)`: `None` where the fence is weakened away.
    #[inline(always)]
    pub(crate) fn fence_ordering(mutant: Mutant, correct: Ordering) -> Option<Ordering> {
        match weakened(mutant, FENCE + encode(correct)) {
            None => Some(correct),
            Some(0) => None,
            Some(to) => Some(decode(to - FENCE)),
        }
    }
}

#[cfg(chase_lev_mutants)]
pub(crate) use active::make_the_next_deque_carry;

/// (Mutant builds.) The enum and tables the build script generates from
/// `model-tests/mutants.md`, and the joint relaxation's levels.
#[cfg(chase_lev_mutants)]
mod mutants {
    use crate::sync::Ordering;

    include!(concat!(env!("OUT_DIR"), "/mutants.rs"));

    /// A fence's code: 16 + its ordering's; `()` (no fence) is 0.
    pub(super) const FENCE: u8 = 16;

    /// An ordering's code in the generated tables: its index + 1 in
    /// Relaxed, Release, Acquire, AcqRel, SeqCst.
    pub(super) fn encode(ordering: Ordering) -> u8 {
        match ordering {
            Ordering::Relaxed => 1,
            Ordering::Release => 2,
            Ordering::Acquire => 3,
            Ordering::AcqRel => 4,
            _ => 5,
        }
    }

    pub(super) fn decode(code: u8) -> Ordering {
        match code {
            1 => Ordering::Relaxed,
            2 => Ordering::Release,
            3 => Ordering::Acquire,
            4 => Ordering::AcqRel,
            _ => Ordering::SeqCst,
        }
    }

    /// (Mutant builds.) The joint relaxation (`model-tests/src/joint.rs`):
    /// the matrix weakens one mutant's sites at a time; this puts a level
    /// of any set of ordering mutants in place together, for the sites of
    /// deques that carry no mutant, without recompiling. Each ordering
    /// mutant has levels, weakest first: the orderings weaker than the
    /// shipped one that the operation allows, and always its `weakens:`
    /// line (a mutant with more than one pair has only that level).
    pub mod joint_relaxation {
        use super::{Mutant, LEVELS, TABLE_LEVEL};
        use core::sync::atomic::AtomicUsize;

        /// Per mutant: 0 for the shipped ordering, else its level's
        /// index plus one. A plain static, not a model checker's atomic: it is set
        /// before an exploration and only read during it.
        static LEVEL: [AtomicUsize; Mutant::ALL.len()] =
            [const { AtomicUsize::new(0) }; Mutant::ALL.len()];

        /// The level of `mutant` that is its `weakens:` line in
        /// `model-tests/mutants.md`, as the matrix weakens it.
        pub fn table_level(mutant: Mutant) -> usize {
            TABLE_LEVEL[mutant as usize]
        }

        /// The levels of `mutant`, weakest first (none for a logic mutant).
        pub fn levels(mutant: Mutant) -> Vec<&'static str> {
            LEVELS[mutant as usize]
                .iter()
                .map(|(text, _)| *text)
                .collect()
        }

        /// Puts level `level` of `mutant` in place (`None`: the shipped
        /// ordering).
        pub fn set(mutant: Mutant, level: Option<usize>) {
            assert!(!matches!(level, Some(level) if level >= LEVELS[mutant as usize].len()));
            // Not the algorithm's: set between explorations, by the thread
            // that then runs them.
            let code = level.map_or(0, |level| level + 1);
            LEVEL[mutant as usize].store(code, std::sync::atomic::Ordering::Relaxed);
        }

        /// Every site back to its shipped ordering.
        pub fn reset() {
            for mutant in Mutant::ALL {
                set(mutant, None);
            }
        }

        /// The (from, to) pairs of the level in place for `mutant`.
        #[cfg_attr(chase_lev_genmc, allow(dead_code))]
        pub(in crate::sites) fn pairs(mutant: Mutant) -> &'static [(u8, u8)] {
            match LEVEL[mutant as usize].load(std::sync::atomic::Ordering::Relaxed) {
                0 => &[],
                level => LEVELS[mutant as usize][level - 1].1,
            }
        }
    }
}
