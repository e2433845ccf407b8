//! The build script of the internal builds of the deque source
//! (`chase-lev-loom`, `chase-lev-loom-mutants`, `chase-lev-shuttle`,
//! `chase-lev-mutants`, and under model-tests/genmc/ `chase-lev-genmc` and
//! `chase-lev-genmc-mutants`): sets the cfgs that make each one a model or
//! mutant build. They are set here, for these packages only, never by a
//! cargo feature.
//!
//! For the mutant builds it also reads the one table of mutants,
//! `model-tests/mutants.md`, and generates from it the `Mutant` enum, its
//! names, each ordering mutant's weakening and the joint relaxation's
//! levels (`$OUT_DIR/mutants.rs`, included by `deque/src/sites.rs`). The
//! builds compile `deque/src` as it is: a site asks the active mutant for
//! its ordering when it runs, and a logic mutant is a branch of the source
//! (`mutant!(Name)`). This script reads the source only to check that
//! every mutant has its sites or its branch, and that every site of an
//! ordering mutant has its weakening.
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    // The cfgs themselves are declared once, in the workspace's lints.
    let cfgs: &[&str] = match std::env::var("CARGO_PKG_NAME").as_deref() {
        Ok("chase-lev-loom") => &["chase_lev_loom", "chase_lev_hooks"],
        Ok("chase-lev-loom-mutants") => &["chase_lev_loom", "chase_lev_mutants", "chase_lev_hooks"],
        Ok("chase-lev-shuttle") => &["chase_lev_shuttle", "chase_lev_mutants", "chase_lev_hooks"],
        Ok("chase-lev-mutants") => &["chase_lev_mutants", "chase_lev_hooks"],
        // The builds that Miri's GenMC mode explores (model-tests/genmc/, a
        // workspace of their own).
        Ok("chase-lev-genmc") => &["chase_lev_genmc", "chase_lev_hooks"],
        Ok("chase-lev-genmc-mutants") => {
            &["chase_lev_genmc", "chase_lev_mutants", "chase_lev_hooks"]
        }
        other => panic!("model-tests/builds/build.rs used by an unexpected package: {other:?}"),
    };
    for cfg in cfgs {
        println!("cargo::rustc-cfg={cfg}");
    }
    if cfgs.contains(&"chase_lev_mutants") {
        // The GenMC scenarios compile their mutant in (this GenMC's Miri
        // cannot read the environment): a new name, a new build.
        println!("cargo::rerun-if-env-changed=CHASE_LEV_GENMC_MUTANT");
        let records = read_table();
        let source_dir = manifest_dir().join("../../../deque/src");
        println!("cargo::rerun-if-changed={}", source_dir.display());
        let mut files = BTreeMap::new();
        read_sources(&source_dir, "", &mut files);
        check_sites_and_branches(&records, &files);
        let rmw = read_modify_write_sites(&records, &files);
        generate(&records, &rmw);
    }
}

/// One record of the table, as far as the build needs it.
struct Record {
    name: String,
    variant: String,
    change: String,
    /// An ordering mutant's weakening: at each `site!(Variant, correct)`
    /// of its variant, `correct` becomes the paired value.
    weakens: Vec<(String, String)>,
    /// A mutant that is several ordering mutants at once: their names.
    combines: Vec<String>,
    /// An ordering mutant's sites' names (`sites:`; its variant if none is
    /// given): each says the ordering it holds.
    sites: Vec<String>,
}

impl Record {
    /// Whether this mutant weakens the site `name`.
    fn has_site(&self, name: &str) -> bool {
        !self.weakens.is_empty()
            && if self.sites.is_empty() {
                self.variant == name
            } else {
                self.sites.iter().any(|site| site == name)
            }
    }

    fn site_names(&self) -> Vec<String> {
        match (self.weakens.is_empty(), self.sites.is_empty()) {
            (true, _) => Vec::new(),
            (false, true) => vec![self.variant.clone()],
            (false, false) => self.sites.clone(),
        }
    }
}

fn manifest_dir() -> PathBuf {
    PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
}

fn out_dir() -> PathBuf {
    PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
}

/// Reads `model-tests/mutants.md`: `## name` opens a record, `key: value`
/// lines follow, a value continued on lines indented by two spaces.
fn read_table() -> Vec<Record> {
    let table_path = manifest_dir().join("../../mutants.md");
    println!("cargo::rerun-if-changed={}", table_path.display());
    let table = std::fs::read_to_string(&table_path)
        .unwrap_or_else(|error| panic!("{}: {error}", table_path.display()));
    let mut records: Vec<Record> = Vec::new();
    let mut key = String::new();
    for line in table.lines() {
        if let Some(name) = line.strip_prefix("## ") {
            records.push(Record {
                name: name.trim().to_string(),
                variant: String::new(),
                change: String::new(),
                weakens: Vec::new(),
                combines: Vec::new(),
                sites: Vec::new(),
            });
            key.clear();
            continue;
        }
        let Some(record) = records.last_mut() else {
            continue; // the preamble
        };
        if line.trim().is_empty() {
            key.clear();
        } else if let Some(more) = line.strip_prefix("  ") {
            if key == "change" {
                record.change.push(' ');
                record.change.push_str(more.trim());
            }
        } else if let Some((field, value)) = line.split_once(':') {
            key = field.to_string();
            let value = value.trim();
            match field {
                "variant" => record.variant = value.to_string(),
                "change" => record.change = value.to_string(),
                "weakens" => record.weakens = weakenings(&record.name, value),
                "sites" => record.sites = value.split(", ").map(str::to_string).collect(),
                "combines" => {
                    record.combines = value.split(", ").map(str::to_string).collect();
                }
                _ => {}
            }
        }
    }
    for record in &records {
        for name in &record.combines {
            assert!(
                records
                    .iter()
                    .any(|other| &other.name == name && !other.weakens.is_empty()),
                "mutant {}: `combines:` names {name}, which is no ordering mutant",
                record.name
            );
        }
        assert!(
            !record.variant.is_empty() && !record.change.is_empty(),
            "{}: mutant {} needs a `variant:` and a `change:` line",
            table_path.display(),
            record.name
        );
    }
    records
}

/// Checks, reading `deque/src`, that each ordering mutant has a site and a
/// `weakens:` pair for each of its sites' shipped values, and that each
/// logic mutant has a branch (`mutant!(Variant)`).
fn check_sites_and_branches(records: &[Record], files: &BTreeMap<String, String>) {
    let mut sites: Vec<(String, String, String)> = Vec::new();
    let mut branches: Vec<String> = Vec::new();
    for (name, text) in files {
        let text = sites_on_one_line(text);
        for (variant, line, correct) in ordering_sites(name, &text) {
            sites.push((variant, format!("deque/src/{name}:{}", line + 1), correct));
        }
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or("");
            for (at, _) in code.match_indices("mutant!(") {
                let rest = &code[at + "mutant!(".len()..];
                let variant: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !variant.is_empty() {
                    branches.push(variant);
                }
            }
        }
    }
    for (variant, place, correct) in &sites {
        let record = records
            .iter()
            .find(|record| record.has_site(variant))
            .unwrap_or_else(|| panic!("{place}: no mutant has the site {variant} (`sites:`)"));
        // A site inside another site's `correct` counts as its own correct value.
        let plain = nested_sites_as_correct(correct);
        assert!(
            record.weakens.iter().any(|(from, _)| *from == plain),
            "{place}: mutant {} has no `weakens:` pair for `{plain}`",
            record.name
        );
    }
    for record in records {
        if !record.combines.is_empty() {
            continue; // its sites are those of the mutants it combines
        }
        if record.weakens.is_empty() {
            assert!(
                branches.contains(&record.variant),
                "mutant {}: a logic mutant needs its branch, `mutant!({})`, in deque/src",
                record.name,
                record.variant
            );
        } else {
            for site in record.site_names() {
                assert!(
                    sites.iter().any(|(name, _, _)| *name == site),
                    "mutant {}: `weakens:` but no `site!({site}, ..)` in deque/src",
                    record.name,
                );
            }
        }
    }
}

/// Writes `$OUT_DIR/mutants.rs`: the enum, `Mutant::ALL`, the names, each
/// mutant's weakening (`WEAKENS`) and the joint relaxation's levels
/// (`LEVELS`, `TABLE_LEVEL`), values coded as `deque/src/sites.rs` decodes
/// them.
fn generate(records: &[Record], rmw: &BTreeMap<String, bool>) {
    let mut out = String::new();
    out.push_str(
        "/// One deliberate weakening of the algorithm, named as the fence lab and\n\
         /// the mutation matrix name it (generated from `model-tests/mutants.md`).\n\
         #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]\n\
         pub enum Mutant {\n",
    );
    for Record {
        variant, change, ..
    } in records
    {
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
    for Record { variant, .. } in records {
        writeln!(out, "        Mutant::{variant},").unwrap();
    }
    out.push_str(
        "    ];\n\n    /// The mutant's command-line name (`take-fence`, ...).\n    \
         pub fn name(self) -> &'static str {\n        match self {\n",
    );
    for Record { name, variant, .. } in records {
        writeln!(out, "            Mutant::{variant} => {name:?},").unwrap();
    }
    out.push_str(
        "        }\n    }\n\n    /// Looks a mutant up by its command-line name.\n    \
         pub fn from_name(name: &str) -> Option<Mutant> {\n",
    );
    // The GenMC mutant build looks its planted mutant up at every site an
    // operation passes (`sites.rs`, `active`: this GenMC reads no
    // thread-local reliably, so nothing caches it), and under Miri the
    // search below is hundreds of events a call, each one GenMC checks
    // every later event against. The planted name is compared first: one
    // comparison, the same answer.
    if let Some(planted) = std::env::var("CHASE_LEV_GENMC_MUTANT")
        .ok()
        .and_then(|planted| records.iter().find(|record| record.name == planted))
    {
        writeln!(
            out,
            "        if name == {:?} {{\n            return Some(Mutant::{});\n        }}",
            planted.name, planted.variant
        )
        .unwrap();
    }
    out.push_str(
        "        Mutant::ALL.into_iter().find(|mutant| mutant.name() == name)\n    }\n}\n",
    );
    let pairs = |pairs: &[(String, String)]| {
        pairs
            .iter()
            .map(|(from, to)| format!("({}, {})", code(from), code(to)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    out.push_str(
        "\n/// Per mutant, its `weakens:` pairs (shipped value, weakened value).\n\
         pub(super) static WEAKENS: [&[(u8, u8)]; Mutant::ALL.len()] = [\n",
    );
    for record in records {
        writeln!(out, "    &[{}],", pairs(&record.weakens)).unwrap();
    }
    out.push_str("];\n");
    out.push_str(
        "\n/// Per mutant, the ordering mutants it is at once (`combines:`).\n\
         pub(super) static COMBINES: [&[Mutant]; Mutant::ALL.len()] = [\n",
    );
    for record in records {
        let combined: Vec<String> = record
            .combines
            .iter()
            .map(|name| {
                let other = records.iter().find(|other| &other.name == name).unwrap();
                format!("Mutant::{}", other.variant)
            })
            .collect();
        writeln!(out, "    &[{}],", combined.join(", ")).unwrap();
    }
    out.push_str("];\n");
    out.push_str(
        "\n/// Each site, by its name in `site!`: the ordering mutant that weakens it.\n\
         #[allow(non_upper_case_globals)]\n\
         pub mod by_site {\n    use super::Mutant;\n",
    );
    for record in records {
        for site in record.site_names() {
            writeln!(
                out,
                "    pub const {site}: Mutant = Mutant::{};",
                record.variant
            )
            .unwrap();
        }
    }
    out.push_str("}\n");
    let mut table = String::new();
    let mut table_levels = Vec::new();
    for record in records {
        if record.weakens.is_empty() {
            table.push_str("    &[],\n");
            table_levels.push("0".to_string());
            continue;
        }
        let all_rmw = rmw.get(&record.variant).copied().unwrap_or(false);
        let levels = levels(record, all_rmw);
        let own = levels
            .iter()
            .position(|(_, level)| *level == record.weakens)
            .expect("the table's weakening is a level");
        table_levels.push(own.to_string());
        table.push_str("    &[\n");
        for (text, level) in levels {
            writeln!(table, "        ({text:?}, &[{}]),", pairs(&level)).unwrap();
        }
        table.push_str("    ],\n");
    }
    writeln!(
        out,
        "\n/// Per mutant, the joint relaxation's levels, weakest first: a\n\
         /// description and the (shipped, weakened) pairs.\n\
         #[allow(clippy::type_complexity)]\n\
         pub(super) static LEVELS: [&[(&str, &[(u8, u8)])]; Mutant::ALL.len()] = [\n{table}];\n\n\
         /// Per mutant, the index of its level that is its `weakens:` line.\n\
         pub(super) static TABLE_LEVEL: [usize; Mutant::ALL.len()] = [{}];",
        table_levels.join(", ")
    )
    .unwrap();
    std::fs::write(out_dir().join("mutants.rs"), out).expect("write mutants.rs");
}

/// `correct` with every `site!(Variant, value)` in it replaced by `value`.
fn nested_sites_as_correct(correct: &str) -> String {
    let mut text = correct.to_string();
    while let Some(at) = text.find("site!(") {
        let comma = at + text[at..].find(',').expect("site!(Variant, value)");
        let close = closing_paren(&text, at + "site!".len()).expect("a closed site!");
        let value = text[comma + 1..close].trim().to_string();
        text.replace_range(at..=close, &value);
    }
    text
}

/// For each variant with a site: whether every one of its sites is the
/// success ordering of a read-modify-write (a CAS or a `fetch_`), found by
/// the call on the site's line or the three before it. Only those may take
/// every weaker ordering in the joint relaxation; a load may not be
/// `Release`, nor a store `Acquire`.
fn read_modify_write_sites(
    records: &[Record],
    files: &BTreeMap<String, String>,
) -> BTreeMap<String, bool> {
    let mut rmw: BTreeMap<String, bool> = BTreeMap::new();
    for (name, text) in files {
        let text = sites_on_one_line(text);
        let lines: Vec<&str> = text.lines().collect();
        for (site, line, _) in ordering_sites(name, &text) {
            let variant = records
                .iter()
                .find(|record| record.has_site(&site))
                .map_or(site, |record| record.variant.clone());
            let context = lines[line.saturating_sub(3)..=line].join(" ");
            let is_rmw = ["compare_exchange", "fetch_", "swap("]
                .iter()
                .any(|call| context.contains(call));
            *rmw.entry(variant).or_insert(true) &= is_rmw;
        }
    }
    rmw
}
fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect::<String>() + ".",
        None => String::new(),
    }
}

/// `text` with every `site!(..)` that rustfmt spread over several lines
/// joined into one, so that each site is a piece of one line (the mutant
/// builds' source need not be pretty).
fn sites_on_one_line(text: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut open_parens = 0i32;
    for line in text.lines() {
        if open_parens > 0 {
            let joined = out.last_mut().expect("a site's first line");
            joined.push(' ');
            joined.push_str(line.trim());
        } else {
            out.push(line.to_string());
        }
        let code = match line.find("//") {
            Some(comment) => &line[..comment],
            None => line,
        };
        if open_parens > 0 {
            open_parens += depth_change(code);
        } else if let Some(at) = code.find("site!(") {
            if !code.contains("($site:ident") {
                open_parens = depth_change(&code[at..]);
            }
        }
    }
    out.join("\n") + "\n"
}

/// The `(`s minus the `)`s of `code`.
fn depth_change(code: &str) -> i32 {
    code.chars().map(paren_step).sum()
}

/// What `c` does to the depth of parentheses.
fn paren_step(c: char) -> i32 {
    match c {
        '(' => 1,
        ')' => -1,
        _ => 0,
    }
}

/// Parses a `weakens:` value: `` `correct` to `weakened` `` pairs,
/// separated by commas (`` `()` `` for a fence removed).
fn weakenings(mutant: &str, value: &str) -> Vec<(String, String)> {
    value
        .split(", ")
        .map(|pair| {
            let spans: Vec<&str> = pair.split('`').collect();
            match spans.as_slice() {
                ["", correct, " to ", weakened, ""] => (correct.to_string(), weakened.to_string()),
                _ => {
                    panic!("mutant {mutant}: `weakens:` pairs are `correct` to `weakened`: {pair}")
                }
            }
        })
        .collect()
}

/// The ordering sites of one file (its sites each on one line): every
/// `site!(Variant, correct)` outside comments, as (variant, line index,
/// `correct`).
fn ordering_sites(file: &str, text: &str) -> Vec<(String, usize, String)> {
    let mut sites = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let code = match line.find("//") {
            Some(comment) => &line[..comment],
            None => line,
        };
        if code.trim_start().starts_with("macro_rules!") || code.contains("($site:ident") {
            continue;
        }
        for (at, _) in code.match_indices("site!(") {
            let open = at + "site!".len();
            let close = closing_paren(code, open)
                .unwrap_or_else(|| panic!("deque/src/{file}:{}: an unclosed `site!(`", index + 1));
            let inside = &code[open + 1..close];
            let (variant, correct) = inside.split_once(',').unwrap_or_else(|| {
                panic!("deque/src/{file}:{}: `site!(Variant, correct)`", index + 1)
            });
            sites.push((
                variant.trim().to_string(),
                index,
                correct.trim().to_string(),
            ));
        }
    }
    sites
}

/// Reads every `.rs` file of `directory` and of its folders into `files`,
/// each under its path below `deque/src` (`prefix` is the path of
/// `directory` there, `""` or ending in `/`), such as `injector/mod.rs`.
fn read_sources(directory: &Path, prefix: &str, files: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(directory).expect("read a folder of deque/src") {
        let path = entry.expect("a file of deque/src").path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            read_sources(&path, &format!("{prefix}{name}/"), files);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            files.insert(
                format!("{prefix}{name}"),
                std::fs::read_to_string(&path).expect("read a source file"),
            );
        }
    }
}

/// The index of the `)` that closes the `(` at `open` in `text`, if any.
fn closing_paren(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0;
    for (offset, c) in text[open..].char_indices() {
        depth += paren_step(c);
        if depth == 0 {
            return Some(open + offset);
        }
    }
    None
}

/// The orderings, weakest first, as the generated table codes them (index + 1).
const ORDERINGS: [&str; 5] = ["Relaxed", "Release", "Acquire", "AcqRel", "SeqCst"];

/// A fence's code: 16 + its ordering's; `()` (no fence) is 0.
const FENCE: u8 = 16;

fn code(value: &str) -> u8 {
    if value == "()" {
        return 0;
    }
    match value
        .strip_prefix("fence(")
        .and_then(|rest| rest.strip_suffix(')'))
    {
        Some(inner) => FENCE + code(inner),
        None => {
            ORDERINGS
                .iter()
                .position(|ordering| *ordering == value)
                .unwrap_or_else(|| panic!("not an ordering: {value}")) as u8
                + 1
        }
    }
}

/// The orderings strictly weaker than `from`, weakest first (`Acquire`
/// before `Release` where both are).
fn weaker(from: &str) -> &'static [&'static str] {
    match from {
        "SeqCst" => &["Relaxed", "Acquire", "Release", "AcqRel"],
        "AcqRel" => &["Relaxed", "Acquire", "Release"],
        "Acquire" | "Release" => &["Relaxed"],
        _ => &[],
    }
}

/// The levels of one ordering mutant, weakest first: each a description
/// and its (from, to) pairs.
fn levels(record: &Record, all_rmw: bool) -> Vec<(String, Vec<(String, String)>)> {
    let table = || {
        let text = record
            .weakens
            .iter()
            .map(|(from, to)| format!("`{from}` to `{to}`"))
            .collect::<Vec<_>>()
            .join(", ");
        (text, record.weakens.clone())
    };
    let [(from, to)] = record.weakens.as_slice() else {
        return vec![table()];
    };
    let targets: Vec<String> = match from
        .strip_prefix("fence(")
        .and_then(|rest| rest.strip_suffix(')'))
    {
        // A fence can be dropped or issued with a weaker ordering (loom has
        // no Relaxed fence).
        Some(inner) if to == "()" => std::iter::once("()".to_string())
            .chain(
                weaker(inner)
                    .iter()
                    .filter(|ordering| **ordering != "Relaxed")
                    .map(|ordering| format!("fence({ordering})")),
            )
            .collect(),
        // A SeqCst load or store may only lose its SeqCst for the
        // ordering the table names: only a read-modify-write takes all.
        _ if from == "SeqCst" && !all_rmw => vec![to.clone()],
        _ => weaker(from)
            .iter()
            .map(|ordering| ordering.to_string())
            .collect(),
    };
    if !targets.contains(to) {
        return vec![table()];
    }
    targets
        .into_iter()
        .map(|target| {
            (
                format!("`{from}` to `{target}`"),
                vec![(from.clone(), target)],
            )
        })
        .collect()
}
