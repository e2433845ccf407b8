//! Linearizability checking (placeholder).
