//! Empty: the point of this package is its tests, the files of
//! `tests/crossbeam-compat/tests/` run against the real crossbeam-deque.
