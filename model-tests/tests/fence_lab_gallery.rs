//! The fence lab's gallery (`docs/fence-lab/`) draws what it claims to: every
//! committed picture renders, with a pure-Rust renderer, to an image of the
//! size the lab lays out, and names every step of the counterexample loom
//! finds today. (That the gallery is byte-for-byte what the lab generates is
//! checked by `.ci/run`, which regenerates it.)
//!
//! Part of `cargo test --features loom`.
#![cfg(feature = "loom")]

use std::path::PathBuf;
use std::sync::OnceLock;

use model_tests::diagram::{self, Diagram};
use model_tests::lab;
use model_tests::Mutant;
use resvg::tiny_skia::{Pixmap, Transform};
use resvg::usvg;

/// A committed picture and what the lab draws for its mutant now.
struct Picture {
    mutant: Mutant,
    committed: String,
    drawn: Diagram,
}

fn gallery_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/fence-lab")
}

/// Every picture of the gallery, with the lab's drawing of the same mutant
/// (loom runs once for all the tests of this file).
fn pictures() -> &'static [Picture] {
    static PICTURES: OnceLock<Vec<Picture>> = OnceLock::new();
    PICTURES.get_or_init(|| {
        // The gallery is drawn with the scenarios' own preemption bounds
        // (`.ci/run` draws it so); only this test binary reads the variable.
        std::env::remove_var("LOOM_MAX_PREEMPTIONS");
        let mut pictures = Vec::new();
        for mutant in Mutant::ALL {
            let file = gallery_dir().join(format!("{}.svg", mutant.name()));
            let Ok(committed) = std::fs::read_to_string(&file) else {
                continue;
            };
            let counterexample = lab::find(mutant).unwrap_or_else(|| {
                panic!(
                    "{} is in the gallery, but loom no longer kills {}",
                    file.display(),
                    mutant.name()
                )
            });
            pictures.push(Picture {
                mutant,
                committed,
                drawn: diagram::draw(&counterexample),
            });
        }
        assert!(
            pictures.len() >= 2,
            "the gallery in {} has {} pictures; the fence lab draws one per mutant loom kills",
            gallery_dir().display(),
            pictures.len()
        );
        pictures
    })
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
fn every_picture_renders_to_a_non_empty_image_of_the_size_the_lab_lays_out() {
    for picture in pictures() {
        let name = picture.mutant.name();
        let tree = usvg::Tree::from_str(&picture.committed, &usvg::Options::default())
            .unwrap_or_else(|error| panic!("{name}.svg does not parse: {error}"));
        let size = tree.size().to_int_size();
        assert_eq!(
            (size.width(), size.height()),
            (picture.drawn.width, picture.drawn.height),
            "{name}.svg declares another size than the lab lays out (regenerate the gallery)"
        );
        let mut pixmap = Pixmap::new(size.width(), size.height())
            .unwrap_or_else(|| panic!("{name}.svg has an empty size"));
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
            "{name}.svg renders to {}x{} pixels of which only {drawn} are not blank",
            size.width(),
            size.height()
        );
    }
}

#[test]
fn every_picture_labels_every_step_of_the_counterexample() {
    for picture in pictures() {
        let name = picture.mutant.name();
        let texts = texts(&picture.committed)
            .unwrap_or_else(|error| panic!("{name}.svg is not well-formed XML: {error}"));
        assert!(
            !picture.drawn.labels.is_empty(),
            "the lab's counterexample for {name} has no steps"
        );
        // In order: each step's number, then its label before the next
        // step's number.
        let mut cursor = 0;
        for (index, label) in picture.drawn.labels.iter().enumerate() {
            let number = (index + 1).to_string();
            let next = (index + 2).to_string();
            let found = texts[cursor..]
                .iter()
                .position(|text| *text == number)
                .map(|at| cursor + at)
                .and_then(|at| {
                    let end = texts[at..]
                        .iter()
                        .position(|text| *text == next)
                        .map_or(texts.len(), |offset| at + offset);
                    texts[at..end]
                        .iter()
                        .position(|text| text == label)
                        .map(|offset| at + offset)
                });
            let Some(at) = found else {
                panic!("{name}.svg lacks step {number}, `{label}` (regenerate the gallery)");
            };
            cursor = at + 1;
        }
    }
}
