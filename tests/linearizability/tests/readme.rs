//! The repository's README shows the crate's example; the crate README
//! (`deque/README.md`) runs it as a doctest of chase-lev. This checks that
//! the two show the same code, so the one a user copies from the repository
//! page is the one that is tested.

use std::path::Path;

/// The code of the first fenced `rust` block of the Markdown file at `path`
/// (relative to the workspace root).
fn first_rust_block(path: &str) -> String {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path);
    let text = std::fs::read_to_string(&file).unwrap_or_else(|error| panic!("{path}: {error}"));
    let mut lines = text.lines().skip_while(|line| line.trim() != "```rust");
    assert!(lines.next().is_some(), "{path} has no ```rust block");
    lines
        .take_while(|line| line.trim() != "```")
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_repository_readme_shows_the_example_the_crate_readme_tests() {
    assert_eq!(
        first_rust_block("README.md"),
        first_rust_block("deque/README.md"),
        "README.md's example differs from deque/README.md's, which runs as a doctest"
    );
}
