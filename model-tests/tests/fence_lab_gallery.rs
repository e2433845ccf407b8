//! The fence lab's gallery (`docs/fence-lab/`) is a gallery: its index
//! links every picture and every picture it links exists; every committed
//! picture renders, with a pure-Rust renderer, to a drawn image and numbers
//! its steps from 1, each with a label; every mutant the committed matrix
//! files as killed has its section in the index. (That the gallery is
//! byte-for-byte what loom finds today is checked by `.ci/run`, which draws
//! it again with `mutation-matrix --gallery` and compares: this test runs no
//! model checker.)
//!
//! Part of `cargo test --features loom`.
#![cfg(feature = "loom")]

use std::collections::BTreeSet;
use std::path::PathBuf;

use model_tests::matrix;
use resvg::tiny_skia::{Pixmap, Transform};
use resvg::usvg;

fn gallery_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/fence-lab")
}

fn read(name: &str) -> String {
    let file = gallery_dir().join(name);
    std::fs::read_to_string(&file).unwrap_or_else(|error| panic!("{}: {error}", file.display()))
}

/// The committed pictures: (file name, contents).
fn pictures() -> Vec<(String, String)> {
    let mut names: Vec<String> = std::fs::read_dir(gallery_dir())
        .expect("docs/fence-lab exists")
        .map(|entry| {
            entry
                .expect("a directory entry")
                .file_name()
                .into_string()
                .expect("UTF-8")
        })
        .filter(|name| name.ends_with(".svg"))
        .collect();
    names.sort();
    assert!(
        names.len() >= 2,
        "the gallery in {} has {} pictures",
        gallery_dir().display(),
        names.len()
    );
    names
        .into_iter()
        .map(|name| (name.clone(), read(&name)))
        .collect()
}

/// The pictures the index links, `[![name](name.svg)](name.svg)`.
fn linked_pictures(index: &str) -> BTreeSet<String> {
    index
        .lines()
        .filter_map(|line| line.strip_prefix("[![")?.split_once("]("))
        .map(|(_, rest)| rest.split(')').next().unwrap_or_default().to_string())
        .collect()
}

/// The texts of the SVG's `<text>` elements, trimmed.
fn texts(svg: &str) -> Result<Vec<String>, String> {
    let document = usvg::roxmltree::Document::parse(svg).map_err(|error| error.to_string())?;
    Ok(document
        .descendants()
        .filter(|node| node.has_tag_name("text"))
        .map(|node| {
            node.descendants()
                .filter(|child| child.is_text())
                .filter_map(|child| child.text())
                .collect::<String>()
                .trim()
                .to_string()
        })
        .collect())
}

#[test]
fn the_index_links_exactly_the_committed_pictures() {
    let linked = linked_pictures(&read("README.md"));
    let committed: BTreeSet<String> = pictures().into_iter().map(|(name, _)| name).collect();
    assert_eq!(
        linked, committed,
        "docs/fence-lab/README.md and the .svg files disagree (regenerate the gallery)"
    );
}

#[test]
fn every_mutant_the_matrix_files_as_killed_has_its_section_in_the_index() {
    let index = read("README.md");
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("mutation-matrix.tsv");
    let rows = matrix::read_tsv(&std::fs::read_to_string(&file).expect("the matrix file"));
    let killed: Vec<&matrix::Record> = rows.iter().filter(|row| row.verdict == "killed").collect();
    assert!(
        !killed.is_empty(),
        "{} files no mutant as killed",
        file.display()
    );
    for row in killed {
        assert!(
            index.contains(&format!("\n## {}\n", row.mutant)),
            "the matrix files {} as killed by {}, but the gallery's index has no section for it",
            row.mutant,
            row.scenario
        );
    }
}

#[test]
fn every_picture_renders_to_a_drawn_image() {
    for (name, svg) in pictures() {
        let tree = usvg::Tree::from_str(&svg, &usvg::Options::default())
            .unwrap_or_else(|error| panic!("{name} does not parse: {error}"));
        let size = tree.size().to_int_size();
        let mut pixmap = Pixmap::new(size.width(), size.height())
            .unwrap_or_else(|| panic!("{name} has an empty size"));
        resvg::render(&tree, Transform::identity(), &mut pixmap.as_mut());
        let pixels = pixmap.pixels();
        let drawn = pixels
            .iter()
            .filter(|pixel| {
                pixel.alpha() > 0 && (pixel.red(), pixel.green(), pixel.blue()) != (255, 255, 255)
            })
            .count();
        assert!(
            drawn * 10 >= pixels.len(),
            "{name} renders to {}x{} pixels of which only {drawn} are not blank",
            size.width(),
            size.height()
        );
    }
}

#[test]
fn every_picture_numbers_its_steps_from_one_each_with_a_label() {
    for (name, svg) in pictures() {
        let texts =
            texts(&svg).unwrap_or_else(|error| panic!("{name} is not well-formed XML: {error}"));
        let is_number = |text: &String| text.parse::<usize>().is_ok();
        let numbers: Vec<usize> = texts.iter().filter_map(|text| text.parse().ok()).collect();
        let mut expected = 1;
        for number in &numbers {
            if *number == expected {
                expected += 1;
            }
        }
        let steps = expected - 1;
        assert!(steps >= 1, "{name} has no numbered step");
        for step in 1..=steps {
            let at = texts
                .iter()
                .position(|text| *text == step.to_string())
                .expect("counted above");
            assert!(
                texts[at + 1..]
                    .iter()
                    .take_while(|text| !is_number(text))
                    .any(|text| !text.is_empty()),
                "{name}: step {step} has no label after its number"
            );
        }
    }
}
