//! Loom models of the chase-lev deque (placeholder).
