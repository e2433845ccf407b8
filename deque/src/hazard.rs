//! The guard a steal holds while it reads a buffer: the buffer announced in
//! a hazard slot of this thread's, the steal's SeqCst fence, the pointer
//! loaded again and compared (proofs-notes/reclamation.md#hazard-slots).
//!
//! The fence is Lê et al.'s own steal fence, between the thief's loads of
//! `top` and `bottom`: announcing before it costs the steal no barrier of
//! its own. So the guard's constructor takes the steal's look at `bottom`,
//! which must come after the fence, and runs it there.

use crate::atomic::{fence, AtomicPtr};
use crate::reclamation::HazardSlot;
use crate::sites::site;
use crate::sync::Ordering::{Acquire, Relaxed, SeqCst};

/// A buffer that the owner will not free while this guard lives. Dropping
/// the guard clears its hazard slot.
pub(crate) struct Hazard<B> {
    /// Cleared (and a borrowed record given back) when the guard drops.
    _slot: HazardSlot,
    buffer: *mut B,
}

impl<B> Hazard<B> {
    /// Protects the buffer that `pointer` points to: announces it, issues
    /// the steal's SeqCst fence, runs `look` (the steal's load of
    /// `bottom`; `None` ends the steal: the deque looks empty), loads the
    /// pointer again and compares. If the owner replaced the buffer
    /// meanwhile, announces the new one and does it all again: only a
    /// buffer change, which is progress of the owner's, repeats it
    /// (lock-free). Returns the guard, and what the last look saw.
    #[inline(always)]
    pub(crate) fn protect(
        pointer: &AtomicPtr<B>,
        mut look: impl FnMut() -> Option<i64>,
    ) -> Option<(Hazard<B>, i64)> {
        // Ordering: Relaxed: only the value to announce; the Acquire load
        // after the fence checks it (proofs-notes/reclamation.md#hazard-slots).
        let mut announced = pointer.load(Relaxed);
        let slot = HazardSlot::new(announced.cast());
        loop {
            // Ordering: SeqCst fence, Lê et al.'s: paired with the owner's
            // pop fence (and other thieves'), owner and thief cannot both
            // miss each other's write (proofs-notes/model.md#store-buffering);
            // it also orders the announcement before the load of the
            // pointer below (proofs-notes/reclamation.md#hazard-slots).
            site!(StealFence, fence(SeqCst));
            let seen = look()?;
            // Ordering: Acquire, pairs with the release store of a new
            // buffer (proofs-notes/reclamation.md#publication).
            let now = pointer.load(site!(BufferLoadAcquire, Acquire));
            if now == announced {
                return Some((
                    Hazard {
                        _slot: slot,
                        buffer: now,
                    },
                    seen,
                ));
            }
            slot.announce(now.cast());
            announced = now;
        }
    }

    /// The protected buffer, for as long as the guard lives. (The pointer
    /// as loaded after the fence, not the announced copy: the two are equal,
    /// but if the announced buffer was freed and a new one took its
    /// address, only the fresh load points into the live allocation.)
    #[inline(always)]
    pub(crate) fn buffer(&self) -> &B {
        // SAFETY: this thread's hazard slot held this address before a
        // fence after which the deque's buffer pointer still was this one,
        // so the owner will not free it while the guard (and its slot)
        // lives (proofs-notes/reclamation.md#hazard-slots).
        unsafe { &*self.buffer }
    }
}
