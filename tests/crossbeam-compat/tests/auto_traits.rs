//! The auto traits and std trait impls of every public type, as a list that
//! compiles only if the crate named `crossbeam_deque` implements exactly
//! those: here chase-lev renamed (package crossbeam-compat) and the real
//! crossbeam-deque (package crossbeam-compat-reference). The list is
//! chase-lev's deque/tests/auto_traits/assertions.rs, which chase-lev's own
//! tests include too.

use crossbeam_deque as deque_crate;

include!("../../../deque/tests/auto_traits/assertions.rs");
