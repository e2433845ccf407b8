//! What the internal builds add to the injector: the pause points, where a
//! scenario's hook holds a thread up, and the constructors of the mutant
//! builds and of the unit tests.
//!
//! The hooks are compiled only into the internal builds of
//! `model-tests/builds/` (`--cfg chase_lev_hooks`, set by their build
//! script, never by a user or a feature), as the logic mutants are: a user's
//! `--cfg chase_lev_loom` build has the public API of the normal build, and
//! its pause points compile to nothing.

#[cfg(all(test, not(chase_lev_loom)))]
use super::blocks::LAP;
use super::Injector;

/// A point of an operation where a scenario's hook may hold the thread up,
/// to model its being descheduled there for as long as the scenario likes
/// (a public item of the internal builds only; elsewhere nothing calls a
/// hook).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pause {
    /// A push claimed a slot and has not written it (after moving the tail
    /// on, if it claimed the block's last slot).
    PushClaimed,
    /// A push claimed its block's last slot, and has not moved the tail on.
    LastSlotClaimed,
    /// A steal claimed its block's last slot, and has not moved the head on.
    LastSlotStolen,
}

/// (Internal builds only.) A pause hook: see [`Injector::set_pause`].
#[cfg(chase_lev_hooks)]
pub type PauseHook = std::sync::Arc<dyn Fn(Pause) + Send + Sync>;

impl<T> Injector<T> {
    /// Calls the pause hook, if any (internal builds only; nothing elsewhere).
    #[inline(always)]
    pub(super) fn pause(&self, at: Pause) {
        #[cfg(chase_lev_hooks)]
        if let Some(hook) = &self.pause {
            hook(at);
        }
        #[cfg(not(chase_lev_hooks))]
        let _ = at;
    }
}

#[cfg(chase_lev_hooks)]
impl<T> Injector<T> {
    /// (Internal builds only.) Makes `hook` run at every [`Pause`]
    /// point of this injector's operations.
    pub fn set_pause(&mut self, hook: PauseHook) {
        self.pause = Some(hook);
    }
}

#[cfg(chase_lev_mutants)]
impl<T> Injector<T> {
    /// (Mutant builds only.) An injector whose orderings are those of
    /// `mutant`, or the correct ones for `None`.
    pub fn new_mutant(mutant: Option<crate::Mutant>) -> Injector<T> {
        crate::sites::make_the_next_deque_carry(mutant);
        Injector::build(0)
    }

    /// (Mutant builds only.) `new_mutant`, with a pause hook.
    pub fn new_pausing(mutant: Option<crate::Mutant>, hook: PauseHook) -> Injector<T> {
        let mut injector = Injector::new_mutant(mutant);
        injector.set_pause(hook);
        injector
    }
}

#[cfg(all(test, not(chase_lev_loom)))]
impl<T> Injector<T> {
    /// An injector whose first position is `first` (a multiple of `LAP`).
    pub(crate) fn starting_at(first: u64) -> Injector<T> {
        Injector::build(first)
    }

    pub(crate) const LAP: u64 = LAP;
}
