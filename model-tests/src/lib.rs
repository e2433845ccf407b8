//! Model tests of the chase-lev deque: the loom model suite, the mutation
//! matrix and the fence lab.
//!
//! The deque's source is compiled again by internal packages (under
//! `builds/`) with loom's or shuttle's atomics and with the mutants: one
//! deliberate weakening of one ordering, fence or step of the algorithm each.
//! The scenarios (`scenarios.rs`) are compiled once per model checker
//! ([`on_loom`], [`on_shuttle`]) and checked against the [`ledger`].

pub mod counterexample;
pub mod diagram;
pub mod evidence;
pub mod explore;
pub mod hardware;
pub mod joint;
pub mod lab;
pub mod ledger;
pub mod lessons;
pub mod matrix;
pub mod on_loom;
pub mod on_loom_shipped;
pub mod on_shuttle;
pub mod table;

/// The mutants, as the loom build names them (the canonical list).
pub use chase_lev_loom_mutants::Mutant;

/// Whether the mutant called `name` weakens the Injector (`injector-…`):
/// only the injector's scenarios run its code.
pub fn is_injector_mutant(name: &str) -> bool {
    name.starts_with("injector-")
}
