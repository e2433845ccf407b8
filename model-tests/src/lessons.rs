//! What each mutant removes, and why the algorithm needs it: the text the
//! fence lab prints after the counterexample, kept in the table of mutants
//! (`model-tests/mutants.md`).

use crate::Mutant;

/// The fence lab's text for one mutant.
#[derive(Clone, Copy, Debug)]
pub struct Lesson {
    /// What the mutant changes, in one line.
    pub change: &'static str,
    /// The litmus shape the correct ordering forbids.
    pub litmus: &'static str,
    /// One paragraph: why the correct ordering forbids the counterexample.
    pub why: &'static str,
}

/// The lesson of `mutant`, from its record in `model-tests/mutants.md`.
pub fn lesson(mutant: Mutant) -> Lesson {
    crate::table::lesson(mutant)
}
