//! Empty: the point of this package is its test, tests/crossbeam_api.rs.
