//! What the comparison bench (`compare/`) and the callgrind workloads
//! (`examples/owner_paths.rs`) share: the deques behind one interface
//! ([`contenders`]) and the owner-only workloads ([`owner_paths`]).

pub mod contenders;
pub mod owner_paths;
