//! The build script of the four internal builds of the deque source
//! (`chase-lev-loom`, `chase-lev-loom-mutants`, `chase-lev-shuttle`,
//! `chase-lev-mutants`): sets the cfgs that make each one a model or mutant
//! build. They are set here, for these packages only, never by a cargo
//! feature. For the mutant builds it also generates the `Mutant` enum from
//! the one table of mutants, `model-tests/mutants.md`.
use std::fmt::Write as _;
use std::path::Path;

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
    if cfgs.contains(&"chase_lev_mutants") {
        generate_mutant_enum();
    }
}

/// Writes `$OUT_DIR/mutants.rs` (included by `deque/src/policy.rs`): the
/// enum, `Mutant::ALL` and the names, from the table's `## name` headings,
/// `variant:` and `change:` lines.
fn generate_mutant_enum() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let table_path = Path::new(&manifest).join("../../mutants.md");
    println!("cargo::rerun-if-changed={}", table_path.display());
    let table = std::fs::read_to_string(&table_path)
        .unwrap_or_else(|error| panic!("{}: {error}", table_path.display()));
    // (name, variant, change) per record.
    let mut records: Vec<(String, String, String)> = Vec::new();
    let mut key = String::new();
    for line in table.lines() {
        if let Some(name) = line.strip_prefix("## ") {
            records.push((name.trim().to_string(), String::new(), String::new()));
            key.clear();
            continue;
        }
        let Some((_, variant, change)) = records.last_mut() else {
            continue; // the preamble
        };
        if let Some(more) = line.strip_prefix("  ") {
            if key == "change" {
                change.push(' ');
                change.push_str(more.trim());
            }
        } else if let Some((field, value)) = line.split_once(": ") {
            key = field.to_string();
            match field {
                "variant" => *variant = value.trim().to_string(),
                "change" => *change = value.trim().to_string(),
                _ => {}
            }
        }
    }
    for (name, variant, change) in &records {
        assert!(
            !variant.is_empty() && !change.is_empty(),
            "{}: mutant {name} needs a `variant:` and a `change:` line",
            table_path.display()
        );
    }
    let mut out = String::new();
    out.push_str(
        "/// One deliberate weakening of the algorithm, named as the fence lab and\n\
         /// the mutation matrix name it (generated from `model-tests/mutants.md`).\n\
         #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]\n\
         pub enum Mutant {\n",
    );
    for (_, variant, change) in &records {
        writeln!(
            out,
            "    #[doc = {:?}]\n    {variant},",
            capitalised(change)
        )
        .unwrap();
    }
    out.push_str(
        "}\n\nimpl Mutant {\n    /// Every mutant, in the order the matrix prints them.\n",
    );
    writeln!(out, "    pub const ALL: [Mutant; {}] = [", records.len()).unwrap();
    for (_, variant, _) in &records {
        writeln!(out, "        Mutant::{variant},").unwrap();
    }
    out.push_str(
        "    ];\n\n    /// The mutant's command-line name (`take-fence`, ...).\n    \
         pub fn name(self) -> &'static str {\n        match self {\n",
    );
    for (name, variant, _) in &records {
        writeln!(out, "            Mutant::{variant} => {name:?},").unwrap();
    }
    out.push_str(
        "        }\n    }\n\n    /// Looks a mutant up by its command-line name.\n    \
         pub fn from_name(name: &str) -> Option<Mutant> {\n        \
         Mutant::ALL.into_iter().find(|mutant| mutant.name() == name)\n    }\n}\n",
    );
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    std::fs::write(Path::new(&out_dir).join("mutants.rs"), out).expect("write mutants.rs");
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect::<String>() + ".",
        None => String::new(),
    }
}
