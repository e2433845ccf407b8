//! Sets the cfgs that make this package's copy of the deque source a model
//! build. They are set here, for this package only, never by a cargo feature.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(chase_lev_loom)");
    println!("cargo::rustc-check-cfg=cfg(chase_lev_shuttle)");
    println!("cargo::rustc-check-cfg=cfg(chase_lev_mutants)");
    println!("cargo::rustc-check-cfg=cfg(chase_lev_retain_buffers)");
    println!("cargo::rustc-check-cfg=cfg(chase_lev_sanitize_thread)");
    println!("cargo::rustc-cfg=chase_lev_mutants");
}
