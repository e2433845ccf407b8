//! The mutants: the deliberate weakenings of the algorithm that the mutation
//! matrix (model-tests) builds and checks, one at a time.
//!
//! Each ordering and fence is written at its site, as
//! `choose!(policy, Site, correct, weakened)`: `correct` is the ordering of
//! the algorithm, `weakened` the one the mutant `Mutant::Site` puts there
//! instead. In the chase-lev crate `Policy` is a zero-sized type and
//! `choose!` expands to `correct`, so the deque's machine code is exactly what
//! it would be with the orderings written alone. Only the internal builds
//! under `model-tests/builds/` (compiled with `--cfg chase_lev_mutants` by
//! their build scripts, never by a cargo feature) give `Policy` a field that
//! selects one mutant, and expose `Mutant` to the tests. The methods below
//! are the logic mutants' switches.

use crate::sync::Ordering::{self, Relaxed, Release};

#[cfg(chase_lev_mutants)]
pub use mutants::Mutant;

#[cfg(chase_lev_mutants)]
mod mutants {
    /// One deliberate weakening of the algorithm, named as the fence lab and
    /// the mutation matrix name it.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum Mutant {
        /// The owner's pop loses its seq_cst fence between `bottom := b - 1`
        /// and the load of `top` (store buffering).
        TakeFence,
        /// A thief loses its seq_cst fence between its loads of `top` and
        /// `bottom` (store buffering, with a second thief).
        StealFence,
        /// Push loses the release fence before `bottom := b + 1`
        /// (message passing).
        PushFence,
        /// Push loads `top` relaxed instead of acquire (the owner may
        /// overwrite a slot a thief is still reading; needs load buffering).
        PushTopAcquire,
        /// A thief loads `top` relaxed instead of acquire.
        StealTopAcquire,
        /// A thief loads `bottom` relaxed instead of acquire (message passing).
        StealBottomAcquire,
        /// A new buffer is published with a relaxed store instead of release.
        BufferPublishRelease,
        /// A thief loads the buffer pointer relaxed instead of acquire.
        BufferLoadAcquire,
        /// A thief's CAS on `top` succeeds with Relaxed instead of SeqCst.
        StealCasSeqCst,
        /// The owner's last-element CAS succeeds with Relaxed instead of SeqCst.
        TakeCasSeqCst,
        /// The FIFO owner's pop CAS succeeds with
        /// Relaxed instead of SeqCst.
        FifoCasSeqCst,
        /// After growing, the owner writes the task into the old buffer.
        NoReloadAfterGrow,
        /// A thief takes the newest task (at `bottom - 1`) instead of the oldest.
        StealFromBottom,
        /// The owner takes the last task without the CAS that races thieves.
        SkipLastCas,
        /// A thief reads its slot after its CAS instead of before.
        ReadAfterCas,
        /// A batch steal publishes the destination's new `bottom` without the
        /// release fence (message passing, to the destination's thieves).
        BatchPublishFence,
        /// The owner loses the SeqCst fence between publishing a new buffer
        /// and reading the hazard slots (store buffering): it may free a
        /// buffer a thief is about to read.
        RetireFence,
        /// A thief announces its buffer with a relaxed store instead of
        /// release.
        HazardProtectRelease,
        /// A thief clears its hazard slot with a relaxed store instead of
        /// release: its reads of the buffer may come after the free.
        HazardClearRelease,
        /// The owner reads the hazard slots relaxed instead of acquire.
        HazardScanAcquire,
        /// A new hazard record is published (head CAS) and the list read
        /// (head load) relaxed instead of release/acquire.
        RecordPublishRelease,
        /// A record is handed from an exited thread to the next (the
        /// `in_use` store and CAS) relaxed instead of release/acquire.
        RecordHandoffRelease,
        /// The owner's look returns `None` when it shows one task, not only
        /// when it shows none (logic: the empty look's condition).
        EmptyLookAtOne,
        /// The owner's CAS-only pop of the last task succeeds with Relaxed
        /// instead of SeqCst.
        CasOnlyPopSeqCst,
        /// The owner takes the task at `bottom - 1` with the CAS-only pop
        /// (`top -> top + 1`) when its look shows two tasks, not only one
        /// (logic: the CAS claims `top`, not the slot read).
        CasOnlyPopAtTwo,
        /// The owner's CAS-only pop returns the task even when its CAS
        /// failed (logic: a thief has taken it).
        CasOnlyPopKeepsLostTask,
        /// The injector's push claims its slot with a CAS on the tail index that
        /// succeeds with Relaxed instead of SeqCst.
        InjectorPushCasSeqCst,
        /// A push loads the tail index (and reads it back from a failed CAS)
        /// relaxed instead of acquire.
        InjectorTailIndexAcquire,
        /// The push that installs a new block stores the tail index of the new
        /// lap relaxed instead of release.
        InjectorTailPublishRelease,
        /// The push that installs a new block links it from the old one with a
        /// relaxed store instead of release.
        InjectorNextRelease,
        /// A push marks its slot written with a relaxed RMW instead of release.
        InjectorWriteRelease,
        /// A steal loads the head index relaxed instead of acquire.
        InjectorHeadIndexAcquire,
        /// A steal loses its seq_cst fence before the load of the tail index.
        InjectorStealFence,
        /// A steal's CAS on the head index succeeds with Relaxed instead of
        /// SeqCst.
        InjectorHeadCasSeqCst,
        /// The steal that moves the head to the next block loads the link to it
        /// relaxed instead of acquire.
        InjectorNextAcquire,
        /// The steal that moves the head to the next block stores the head index
        /// of the new lap relaxed instead of release.
        InjectorHeadPublishRelease,
        /// A steal checks that its slot is written with a relaxed load instead
        /// of acquire.
        InjectorWriteAcquire,
        /// A steal marks its slot read with an acquire-only RMW instead of
        /// acquire-release.
        InjectorReadDoneRelease,
        /// The thread that frees a block checks the other slots with relaxed
        /// loads and RMWs instead of acquire (and acquire-release).
        InjectorDestroyAcquire,
        /// The block pointers of the head and the tail are stored and loaded
        /// relaxed instead of release and acquire.
        InjectorBlockPointerAcqRel,
        /// A thread takes a ticket on a cursor's block (to help it over a
        /// block end) with a relaxed CAS instead of acquire.
        InjectorTicketAcquire,
        /// A helper gives its ticket back with a relaxed CAS instead of
        /// release.
        InjectorTicketRelease,
        /// The CAS that moves a cursor to the next block is release-only
        /// instead of acquire-release (it no longer acquires the tickets
        /// given back to it).
        InjectorCursorCasAcquire,
        /// The RMWs that hand a block's tickets and shares over to whoever
        /// frees it are relaxed instead of acquire-release.
        InjectorShareAcqRel,
    }

    impl Mutant {
        /// Every mutant, in the order the matrix prints them.
        pub const ALL: [Mutant; 44] = [
            Mutant::TakeFence,
            Mutant::StealFence,
            Mutant::PushFence,
            Mutant::PushTopAcquire,
            Mutant::StealTopAcquire,
            Mutant::StealBottomAcquire,
            Mutant::BufferPublishRelease,
            Mutant::BufferLoadAcquire,
            Mutant::StealCasSeqCst,
            Mutant::TakeCasSeqCst,
            Mutant::FifoCasSeqCst,
            Mutant::NoReloadAfterGrow,
            Mutant::StealFromBottom,
            Mutant::SkipLastCas,
            Mutant::ReadAfterCas,
            Mutant::BatchPublishFence,
            Mutant::RetireFence,
            Mutant::HazardProtectRelease,
            Mutant::HazardClearRelease,
            Mutant::HazardScanAcquire,
            Mutant::RecordPublishRelease,
            Mutant::RecordHandoffRelease,
            Mutant::EmptyLookAtOne,
            Mutant::CasOnlyPopSeqCst,
            Mutant::CasOnlyPopAtTwo,
            Mutant::CasOnlyPopKeepsLostTask,
            Mutant::InjectorPushCasSeqCst,
            Mutant::InjectorTailIndexAcquire,
            Mutant::InjectorTailPublishRelease,
            Mutant::InjectorNextRelease,
            Mutant::InjectorWriteRelease,
            Mutant::InjectorHeadIndexAcquire,
            Mutant::InjectorStealFence,
            Mutant::InjectorHeadCasSeqCst,
            Mutant::InjectorNextAcquire,
            Mutant::InjectorHeadPublishRelease,
            Mutant::InjectorWriteAcquire,
            Mutant::InjectorReadDoneRelease,
            Mutant::InjectorDestroyAcquire,
            Mutant::InjectorBlockPointerAcqRel,
            Mutant::InjectorTicketAcquire,
            Mutant::InjectorTicketRelease,
            Mutant::InjectorCursorCasAcquire,
            Mutant::InjectorShareAcqRel,
        ];

        /// The mutant's command-line name (`take-fence`, ...).
        pub fn name(self) -> &'static str {
            match self {
                Mutant::TakeFence => "take-fence",
                Mutant::StealFence => "steal-fence",
                Mutant::PushFence => "push-fence",
                Mutant::PushTopAcquire => "push-top-acquire",
                Mutant::StealTopAcquire => "steal-top-acquire",
                Mutant::StealBottomAcquire => "steal-bottom-acquire",
                Mutant::BufferPublishRelease => "buffer-publish-release",
                Mutant::BufferLoadAcquire => "buffer-load-acquire",
                Mutant::StealCasSeqCst => "steal-cas-seqcst",
                Mutant::TakeCasSeqCst => "take-cas-seqcst",
                Mutant::FifoCasSeqCst => "fifo-cas-seqcst",
                Mutant::NoReloadAfterGrow => "no-reload-after-grow",
                Mutant::StealFromBottom => "steal-from-bottom",
                Mutant::SkipLastCas => "skip-last-cas",
                Mutant::ReadAfterCas => "read-after-cas",
                Mutant::BatchPublishFence => "batch-publish-fence",
                Mutant::RetireFence => "retire-fence",
                Mutant::HazardProtectRelease => "hazard-protect-release",
                Mutant::HazardClearRelease => "hazard-clear-release",
                Mutant::HazardScanAcquire => "hazard-scan-acquire",
                Mutant::RecordPublishRelease => "record-publish-release",
                Mutant::RecordHandoffRelease => "record-handoff-release",
                Mutant::EmptyLookAtOne => "empty-look-at-one",
                Mutant::CasOnlyPopSeqCst => "cas-only-pop-seqcst",
                Mutant::CasOnlyPopAtTwo => "cas-only-pop-at-two",
                Mutant::CasOnlyPopKeepsLostTask => "cas-only-pop-keeps-lost-task",
                Mutant::InjectorPushCasSeqCst => "injector-push-cas-seqcst",
                Mutant::InjectorTailIndexAcquire => "injector-tail-index-acquire",
                Mutant::InjectorTailPublishRelease => "injector-tail-publish-release",
                Mutant::InjectorNextRelease => "injector-next-release",
                Mutant::InjectorWriteRelease => "injector-write-release",
                Mutant::InjectorHeadIndexAcquire => "injector-head-index-acquire",
                Mutant::InjectorStealFence => "injector-steal-fence",
                Mutant::InjectorHeadCasSeqCst => "injector-head-cas-seqcst",
                Mutant::InjectorNextAcquire => "injector-next-acquire",
                Mutant::InjectorHeadPublishRelease => "injector-head-publish-release",
                Mutant::InjectorWriteAcquire => "injector-write-acquire",
                Mutant::InjectorReadDoneRelease => "injector-read-done-release",
                Mutant::InjectorDestroyAcquire => "injector-destroy-acquire",
                Mutant::InjectorBlockPointerAcqRel => "injector-block-pointer-acqrel",
                Mutant::InjectorTicketAcquire => "injector-ticket-acquire",
                Mutant::InjectorTicketRelease => "injector-ticket-release",
                Mutant::InjectorCursorCasAcquire => "injector-cursor-cas-acquire",
                Mutant::InjectorShareAcqRel => "injector-share-acqrel",
            }
        }

        /// Looks a mutant up by its command-line name.
        pub fn from_name(name: &str) -> Option<Mutant> {
            Mutant::ALL.into_iter().find(|mutant| mutant.name() == name)
        }
    }
}

/// Which orderings this deque uses: always the correct ones in the chase-lev
/// crate; possibly one mutant in the internal mutant builds.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Policy {
    #[cfg(chase_lev_mutants)]
    pub(crate) mutant: Option<Mutant>,
}

#[cfg(chase_lev_mutants)]
std::thread_local! {
    /// The mutant of the last deque made on this OS thread, for the hazard
    /// registry, which belongs to no deque. Loom and shuttle run every
    /// thread of a model on the OS thread that started it, so a model's
    /// registry sees its deque's mutant.
    static REGISTRY_MUTANT: core::cell::Cell<Option<Mutant>> = const { core::cell::Cell::new(None) };
}

impl Policy {
    /// The policy of the hazard registry: the correct orderings, except in a
    /// mutant build whose last deque carries a registry mutant.
    #[inline(always)]
    pub(crate) fn of_registry() -> Policy {
        Policy {
            #[cfg(chase_lev_mutants)]
            mutant: REGISTRY_MUTANT.with(core::cell::Cell::get),
        }
    }

    /// (Mutant builds.) Makes `self` the registry's policy on this OS thread.
    #[cfg(chase_lev_mutants)]
    pub(crate) fn apply_to_registry(self) {
        REGISTRY_MUTANT.with(|cell| cell.set(self.mutant));
    }
}

/// Picks `correct`, unless this policy's mutant weakens `site`: written at
/// each ordering's site, as in `inner.top.load(choose!(policy,
/// PushTopAcquire, Acquire, Relaxed))`.
macro_rules! choose {
    ($policy:expr, $site:ident, $correct:expr, $weakened:expr) => {{
        #[cfg(chase_lev_mutants)]
        {
            if $policy.mutant == Some($crate::policy::Mutant::$site) {
                $weakened
            } else {
                $correct
            }
        }
        #[cfg(not(chase_lev_mutants))]
        {
            // Only the mutant builds read the policy and the weakened value.
            let _ = $policy;
            let _weakened = if false { $weakened } else { $correct };
            $correct
        }
    }};
}
pub(crate) use choose;

/// The ordering of every owner store to `bottom`: Relaxed, as in Lê et al.,
/// published by the release fence in push. ThreadSanitizer does not model
/// fences, so the build made for it (`--cfg chase_lev_sanitize_thread`, see
/// `.ci/run`) uses Release stores, which it does understand.
pub(crate) const RELAXED_UNLESS_TSAN: Ordering = if cfg!(chase_lev_sanitize_thread) {
    Release
} else {
    Relaxed
};

impl Policy {
    /// Logic mutant: keep writing into the old buffer after a grow.
    #[inline(always)]
    pub(crate) fn reload_after_grow(self) -> bool {
        choose!(self, NoReloadAfterGrow, true, false)
    }

    /// Logic mutant: the thief reads the slot at `bottom - 1`.
    #[inline(always)]
    pub(crate) fn steal_from_top(self) -> bool {
        choose!(self, StealFromBottom, true, false)
    }

    /// Logic mutant: the owner takes the last task without a CAS.
    #[inline(always)]
    pub(crate) fn cas_last_task(self) -> bool {
        choose!(self, SkipLastCas, true, false)
    }

    /// Logic mutant: the thief reads its slot after its CAS.
    #[inline(always)]
    pub(crate) fn read_before_cas(self) -> bool {
        choose!(self, ReadAfterCas, true, false)
    }

    // ---------------------------------------------------- owner fast paths --
    // The owner's paths beyond Lê et al. (proofs-notes/fast-paths.md).

    /// pop (LIFO): the most tasks the owner's look may show and still return
    /// `None` at once: 0 (empty).
    #[inline(always)]
    pub(crate) fn empty_look_max_len(self) -> i64 {
        choose!(self, EmptyLookAtOne, 0, 1)
    }

    /// pop (LIFO): the most tasks the owner's look may show and still take
    /// the CAS-only path: 1.
    #[inline(always)]
    pub(crate) fn cas_only_pop_max_len(self) -> i64 {
        choose!(self, CasOnlyPopAtTwo, 1, 2)
    }

    /// Logic mutant: the CAS-only pop keeps the task after a failed CAS.
    #[inline(always)]
    pub(crate) fn cas_only_pop_checks_cas(self) -> bool {
        choose!(self, CasOnlyPopKeepsLostTask, true, false)
    }
}

/// Issues `fence(ordering)`, or nothing for `None` (a removed fence).
#[inline(always)]
pub(crate) fn fence_if(ordering: Option<Ordering>) {
    if let Some(ordering) = ordering {
        crate::sync::fence(ordering);
    }
}
