//! The build script of the four internal builds of the deque source
//! (`chase-lev-loom`, `chase-lev-loom-mutants`, `chase-lev-shuttle`,
//! `chase-lev-mutants`): sets the cfgs that make each one a model or mutant
//! build. They are set here, for these packages only, never by a cargo
//! feature.
fn main() {
    // The cfgs themselves are declared once, in the workspace's lints.
    let cfgs: &[&str] = match std::env::var("CARGO_PKG_NAME").as_deref() {
        Ok("chase-lev-loom") => &["chase_lev_loom"],
        Ok("chase-lev-loom-mutants") => &["chase_lev_loom", "chase_lev_mutants"],
        Ok("chase-lev-shuttle") => &["chase_lev_shuttle", "chase_lev_mutants"],
        Ok("chase-lev-mutants") => &["chase_lev_mutants"],
        other => panic!("model-tests/builds/build.rs used by an unexpected package: {other:?}"),
    };
    for cfg in cfgs {
        println!("cargo::rustc-cfg={cfg}");
    }
}
