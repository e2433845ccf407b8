//! The build script of the three internal builds of the deque source
//! (`chase-lev-loom`, `chase-lev-shuttle`, `chase-lev-mutants`): sets the cfgs
//! that make each one a model build. They are set here, for these packages
//! only, never by a cargo feature.
fn main() {
    for cfg in [
        "chase_lev_loom",
        "chase_lev_shuttle",
        "chase_lev_mutants",
        "chase_lev_retain_buffers",
        "chase_lev_sanitize_thread",
    ] {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
    }
    println!("cargo::rustc-cfg=chase_lev_mutants");
    match std::env::var("CARGO_PKG_NAME").as_deref() {
        Ok("chase-lev-loom") => println!("cargo::rustc-cfg=chase_lev_loom"),
        Ok("chase-lev-shuttle") => println!("cargo::rustc-cfg=chase_lev_shuttle"),
        Ok("chase-lev-mutants") => {}
        other => panic!("model-tests/builds/build.rs used by an unexpected package: {other:?}"),
    }
}
