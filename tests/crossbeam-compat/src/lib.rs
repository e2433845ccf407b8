//! Empty: the point of this package is its tests (tests/*.rs), crossbeam-deque
//! code run here on chase-lev renamed `crossbeam-deque`.
