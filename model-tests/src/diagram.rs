//! The fence lab's counterexample as a picture: an SVG sequence diagram of
//! the failing interleaving.
//!
//! One lane per thread (owner, thief 1, ...), time going down, one row per
//! step of the event log (every access of a named atomic, with its
//! ordering, and of a slot), numbered as the lab's text trace numbers them.
//! Each operation is a box from its call to its return. Each read of an
//! atomic (a load, a CAS, a read-modify-write) shows the value it read,
//! with an arrow from the store it read; a STALE load is red,
//! with a dashed red link from the newer store it missed. A CAS is marked
//! WON or LOST, a lost one with a dotted link to the CAS it lost to. The
//! steps the verdict is about are marked, and the verdict is at the bottom.
//!
//! Which store a load read is derived, not logged (see
//! [`crate::counterexample::Source`]); the picture's legend states the rule.
//! Nothing that changes from run to run (timings) is drawn, so the gallery
//! in `docs/fence-lab/` can be checked for being up to date.

use svg::node::element::path::Data;
use svg::node::element::{Definitions, Group, Line, Marker, Path, Rectangle, Text, Title};
use svg::Document;

use crate::counterexample::{Read, Source, Step};
use crate::lab::Counterexample;
use crate::lessons::lesson;

/// A drawn counterexample.
#[derive(Clone, Debug)]
pub struct Diagram {
    /// The SVG document.
    pub svg: String,
    /// Its width in pixels, as the document declares it.
    pub width: u32,
    /// Its height in pixels, as the document declares it.
    pub height: u32,
    /// The label of every step, in order (each is one text element).
    pub labels: Vec<String>,
}

const MONO: &str = "DejaVu Sans Mono, Menlo, Consolas, monospace";
const SANS: &str = "DejaVu Sans, Helvetica, Arial, sans-serif";
/// Font sizes (px) of the events, of the lines under them, of the caption.
const EVENT: f64 = 12.0;
const SMALL: f64 = 11.0;
const CAPTION: f64 = 13.0;
/// Width of a glyph of DejaVu Sans Mono (0.602 em), rounded up; also used,
/// generously, for the proportional caption font.
const GLYPH: f64 = 0.61;
const LINE: f64 = 16.0;
const ROW_PAD: f64 = 6.0;
const MARGIN: f64 = 24.0;
/// The step numbers' column.
const NUMBERS: f64 = 34.0;
/// Beside each lane (left of it, or right of the last one): the links
/// between two steps of one thread.
const GUTTER: f64 = 34.0;
/// Between two lanes: the links between threads.
const GAP: f64 = 160.0;
const MIN_LANE: f64 = 300.0;
const MIN_WIDTH: f64 = 960.0;
const INDENT: f64 = 14.0;

const INK: &str = "#212121";
const QUIET: &str = "#616161";
const LINK: &str = "#1565c0";
const OWN_LINK: &str = "#9e9e9e";
const STALE: &str = "#d32f2f";
const WON: &str = "#2e7d32";
const LOST: &str = "#455a64";
const VERDICT: &str = "#b71c1c";
const VERDICT_FILL: &str = "#ffebee";
const LANE_FILLS: [&str; 4] = ["#f3f7fc", "#fdf7ef", "#f3faf1", "#f8f3fb"];
const BOX_FILLS: [&str; 4] = ["#dce8f7", "#fbe6cc", "#dcefd6", "#ebdcf3"];
const BOX_STROKES: [&str; 4] = ["#7a9cc6", "#d2a25f", "#7fb36f", "#a889bd"];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Call,
    Return,
    Access,
    Other,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Tone {
    Quiet,
    Link,
    Stale,
    Lost,
}

impl Tone {
    fn colour(self) -> &'static str {
        match self {
            Tone::Quiet => QUIET,
            Tone::Link => LINK,
            Tone::Stale => STALE,
            Tone::Lost => LOST,
        }
    }
}

struct Row {
    lane: usize,
    kind: Kind,
    label: String,
    /// Lines under the label: what a load read, why a CAS lost.
    lines: Vec<(String, Tone)>,
    /// WON / LOST.
    badge: Option<(&'static str, &'static str)>,
    stale: bool,
    /// The verdict's mark on this step.
    mark: Option<String>,
    top: f64,
}

impl Row {
    fn height(&self) -> f64 {
        ROW_PAD + LINE * (1 + self.lines.len()) as f64
    }

    /// Where links attach: the middle of the label's line.
    fn anchor(&self) -> f64 {
        self.top + ROW_PAD / 2.0 + LINE / 2.0
    }

    fn baseline(&self) -> f64 {
        self.top + ROW_PAD / 2.0 + LINE * 0.75
    }
}

/// The label a step gets in the picture: an operation's call (`pop()`), its
/// return (`returns Some(task 2)`), or the access as the log has it
/// (`load bottom = 2 (Acquire)`), a CAS without its outcome
/// (`CAS top 0 -> 1 (SeqCst)`, which gets a WON or LOST badge).
pub fn label(step: &Step) -> String {
    if step.is_note {
        let rest = step.event.strip_prefix(&step.thread).unwrap_or(&step.event);
        let rest = rest.trim_start_matches("'s").trim_start();
        if let Some(call) = rest.strip_prefix("calls ") {
            return call.to_string();
        }
        if let Some(at) = rest.find("returns") {
            return rest[at..].to_string();
        }
        return rest.to_string();
    }
    // A CAS without its outcome, which the badge shows (and, for one that
    // lost, the value it found, which the line under it shows).
    let event = step.event.as_str();
    if let Some(at) = event.find(" won (") {
        return format!("{}{}", &event[..at], &event[at + " won".len()..]);
    }
    if let (Some(at), Some(ordering)) = (event.find(" lost, "), event.rfind(" (")) {
        return format!("{}{}", &event[..at], &event[ordering..]);
    }
    event.to_string()
}

fn kind(step: &Step) -> Kind {
    if !step.is_note {
        Kind::Access
    } else if step.event.contains(" calls ") {
        Kind::Call
    } else if step.event.contains(" returns") {
        Kind::Return
    } else {
        Kind::Other
    }
}

/// Lanes: the owner first, then the thieves in the order of their names.
fn lanes(steps: &[Step]) -> Vec<String> {
    let mut lanes: Vec<String> = Vec::new();
    for step in steps {
        if !lanes.contains(&step.thread) {
            lanes.push(step.thread.clone());
        }
    }
    lanes.sort_by_key(|lane| (lane != "owner", lane.clone()));
    lanes
}

fn source_text(read: &Read) -> String {
    match read.source {
        Source::Initial => format!("{} = {} (initial)", read.variable, read.value),
        Source::Step(step) => format!("{} = {} (step {step})", read.variable, read.value),
    }
}

/// The lines under an access: what it read, and what it missed.
fn read_lines(step: &Step, lane_of: impl Fn(usize) -> usize, lane: usize) -> Vec<(String, Tone)> {
    let mut lines = Vec::new();
    let mut reads: Vec<&Read> = step.reads.iter().collect();
    if let Some(read) = step.cas.as_ref().and_then(|cas| cas.read.as_ref()) {
        reads.push(read);
    }
    if !reads.is_empty() {
        let across = reads.iter().any(|read| match read.source {
            Source::Step(source) => lane_of(source) != lane,
            Source::Initial => false,
        });
        let text = reads
            .iter()
            .map(|read| source_text(read))
            .collect::<Vec<_>>()
            .join(", ");
        lines.push((
            format!("read {text}"),
            if across { Tone::Link } else { Tone::Quiet },
        ));
    }
    for read in &reads {
        if let Some(missed) = &read.missed {
            lines.push((
                format!(
                    "STALE: step {} had already stored {} := {}",
                    missed.step, read.variable, missed.value
                ),
                Tone::Stale,
            ));
        }
    }
    if let Some(cas) = &step.cas {
        if !cas.won {
            let why = match cas.lost_to {
                Some(step) => format!(
                    "lost: {} was no longer {}, step {step} moved it",
                    cas.variable, cas.expected
                ),
                None => format!("lost: {} was no longer {}", cas.variable, cas.expected),
            };
            lines.push((why, Tone::Lost));
        }
    }
    lines
}

/// The steps the verdict is about, with their marks.
fn marks(steps: &[Step], labels: &[String], violation: &str) -> Vec<(usize, String)> {
    let task_after = |text: &str, pattern: &str| -> Option<u64> {
        let at = text.find(pattern)? + pattern.len();
        let digits: String = text[at..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    };
    let returns_task = |id: u64, mark: &str| -> Vec<(usize, String)> {
        let needle = format!("(task {id})");
        steps
            .iter()
            .enumerate()
            .filter(|(index, step)| kind(step) == Kind::Return && labels[*index].contains(&needle))
            .map(|(index, _)| (index, mark.to_string()))
            .collect()
    };
    if let Some(id) = task_after(violation, "task ").filter(|_| violation.contains("taken twice")) {
        return returns_task(id, &format!("✗ task {id} taken twice"));
    }
    if let Some(id) = task_after(violation, " took task ") {
        let mark = if id == 0 {
            "✗ task 0: zeroes, never written".to_string()
        } else {
            format!("✗ task {id}: never pushed")
        };
        return returns_task(id, &mark);
    }
    if let Some(id) = task_after(violation, "task ").filter(|_| violation.contains("was lost")) {
        let needle = format!("(task {id})");
        return steps
            .iter()
            .enumerate()
            .filter(|(index, step)| kind(step) == Kind::Call && labels[*index].contains(&needle))
            .map(|(index, _)| (index, format!("✗ task {id} never taken")))
            .collect();
    }
    if let Some((who, _)) = violation.split_once("'s ") {
        if violation.contains("reported an empty deque") {
            return steps
                .iter()
                .enumerate()
                .rev()
                .find(|(index, step)| {
                    step.thread == who
                        && kind(step) == Kind::Return
                        && labels[*index].ends_with("Empty")
                })
                .map(|(index, _)| (index, "✗ wrong Empty".to_string()))
                .into_iter()
                .collect();
        }
    }
    Vec::new()
}

fn round(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}

fn text(content: impl Into<String>, x: f64, y: f64, size: f64, colour: &str) -> Text {
    Text::new(content)
        .set("x", round(x))
        .set("y", round(y))
        .set("font-size", size)
        .set("fill", colour)
}

fn rect(x: f64, y: f64, width: f64, height: f64, fill: &str) -> Rectangle {
    Rectangle::new()
        .set("x", round(x))
        .set("y", round(y))
        .set("width", round(width))
        .set("height", round(height))
        .set("fill", fill)
}

fn marker(id: &str, colour: &str) -> Marker {
    Marker::new()
        .set("id", id)
        .set("viewBox", "0 0 10 10")
        .set("refX", 9)
        .set("refY", 5)
        .set("markerWidth", 7)
        .set("markerHeight", 7)
        .set("orient", "auto")
        .add(
            Path::new()
                .set("d", "M0,0 L10,5 L0,10 z")
                .set("fill", colour),
        )
}

/// Greedy word wrap to `width` characters.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split_whitespace() {
        let line = lines.last_mut().expect("one line at least");
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(word.to_string());
        } else {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
    }
    lines
}

fn chars_width(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * size * GLYPH
}

/// A link between two rows: an arrow from `from` to `to` (a curve in the
/// gutter when both are in one lane), in `colour`, dashed or dotted if
/// asked.
struct Link {
    from: usize,
    to: usize,
    colour: &'static str,
    marker: &'static str,
    dash: Option<&'static str>,
    label: Option<&'static str>,
}

/// Draws `counterexample` (found by [`crate::lab::find`]).
pub fn draw(counterexample: &Counterexample) -> Diagram {
    let steps = crate::lab::steps_to_draw(counterexample);
    let labels: Vec<String> = steps.iter().map(label).collect();
    let lanes = lanes(&steps);
    let lane_of_step: Vec<usize> = steps
        .iter()
        .map(|step| {
            lanes
                .iter()
                .position(|lane| *lane == step.thread)
                .expect("every thread has a lane")
        })
        .collect();
    // Steps are numbered from 1.
    let lane_of = |number: usize| lane_of_step[number - 1];
    let violation = counterexample.failure.violation.trim().to_string();
    let verdict = counterexample.verdict();
    let stopped_by_loom = !counterexample.failure.found_by_ledger;
    let race = violation.contains("Causality violation");

    let mut rows: Vec<Row> = steps
        .iter()
        .enumerate()
        .map(|(index, step)| {
            let lane = lane_of_step[index];
            Row {
                lane,
                kind: kind(step),
                label: labels[index].clone(),
                lines: read_lines(step, lane_of, lane),
                badge: step.cas.as_ref().map(|cas| {
                    if cas.won {
                        ("WON", WON)
                    } else {
                        ("LOST", LOST)
                    }
                }),
                stale: step
                    .reads
                    .iter()
                    .chain(step.cas.iter().filter_map(|cas| cas.read.as_ref()))
                    .any(|read| read.missed.is_some()),
                mark: None,
                top: 0.0,
            }
        })
        .collect();
    for (index, mark) in marks(&steps, &labels, &violation) {
        rows[index].mark = Some(mark);
    }
    if stopped_by_loom {
        if let Some(last) = rows.last() {
            let lane = last.lane;
            rows.push(Row {
                lane,
                kind: Kind::Other,
                label: if race {
                    "✗ its next access: loom stops the execution".to_string()
                } else {
                    "✗ the execution panics".to_string()
                },
                lines: Vec::new(),
                badge: None,
                stale: false,
                mark: None,
                top: 0.0,
            });
        }
    }

    // Widths: each lane as wide as its longest line.
    let mut lane_widths = vec![MIN_LANE; lanes.len()];
    for row in &rows {
        let mut width = INDENT + chars_width(&row.label, EVENT) + 16.0;
        if let Some((badge, _)) = row.badge {
            width += chars_width(badge, SMALL) + 24.0;
        }
        if let Some(mark) = &row.mark {
            width += chars_width(mark, SMALL) + 24.0;
        }
        for (line, _) in &row.lines {
            width = width.max(INDENT * 2.0 + chars_width(line, SMALL) + 12.0);
        }
        lane_widths[row.lane] = lane_widths[row.lane].max(width);
    }
    let fixed: f64 = MARGIN * 2.0 + NUMBERS + GUTTER * 2.0 + lane_widths.iter().sum::<f64>();
    let gap = if lanes.len() > 1 {
        GAP.max((MIN_WIDTH - fixed) / (lanes.len() - 1) as f64)
    } else {
        GAP
    };
    let mut lane_x = Vec::new();
    let mut x = MARGIN + NUMBERS + GUTTER;
    for width in &lane_widths {
        lane_x.push(x);
        x += width + gap;
    }
    let width = (x - gap + GUTTER + MARGIN).max(MIN_WIDTH).ceil();
    let text_width = width - 2.0 * MARGIN;

    let mut document = Document::new();
    let mut defs = Definitions::new();
    for (id, colour) in [
        ("arrow-link", LINK),
        ("arrow-own", OWN_LINK),
        ("arrow-stale", STALE),
        ("arrow-lost", LOST),
    ] {
        defs = defs.add(marker(id, colour));
    }

    // The caption.
    let lesson = lesson(counterexample.mutant);
    let mut caption = Group::new().set("font-family", SANS);
    let mut y = MARGIN + 18.0;
    caption = caption.add(
        text(
            format!("fence lab: {}", counterexample.mutant.name()),
            MARGIN,
            y,
            20.0,
            INK,
        )
        .set("font-weight", "bold"),
    );
    y += 10.0;
    let wrap_at = (text_width / (CAPTION * GLYPH)) as usize;
    let correct = match &counterexample.correct_failure {
        None => format!(
            "the correct deque passes all {} interleavings loom explores",
            counterexample.correct_interleavings
        ),
        Some(failure) => format!("the correct deque FAILED too: {failure}"),
    };
    let paragraphs = [
        (format!("the mutant: {}", lesson.change), INK),
        (format!("the litmus shape: {}", lesson.litmus), INK),
        (
            format!(
                "scenario {} ({} threads, {}): {}; the mutant fails at interleaving {}, drawn below.",
                counterexample.scenario,
                counterexample.threads,
                counterexample.bound(),
                correct,
                counterexample.failing_interleaving
            ),
            QUIET,
        ),
    ];
    for (paragraph, colour) in &paragraphs {
        for line in wrap(paragraph, wrap_at) {
            y += CAPTION + 5.0;
            caption = caption.add(text(line, MARGIN, y, CAPTION, colour));
        }
    }

    // Lane headers.
    y += 30.0;
    let mut headers = Group::new()
        .set("font-family", SANS)
        .set("font-weight", "bold");
    for (lane, name) in lanes.iter().enumerate() {
        headers = headers.add(
            text(
                name.as_str(),
                lane_x[lane] + lane_widths[lane] / 2.0,
                y,
                15.0,
                INK,
            )
            .set("text-anchor", "middle"),
        );
    }
    headers = headers.add(text("step", MARGIN, y, SMALL, QUIET).set("font-weight", "normal"));
    y += 10.0;
    let lanes_top = y;

    // Rows, top to bottom.
    for row in &mut rows {
        row.top = y;
        y += row.height();
    }
    let lanes_bottom = y;

    let mut background = Group::new();
    for (lane, lane_width) in lane_widths.iter().enumerate() {
        background = background.add(
            rect(
                lane_x[lane],
                lanes_top,
                *lane_width,
                lanes_bottom - lanes_top,
                LANE_FILLS[lane % LANE_FILLS.len()],
            )
            .set("stroke", "#e0e0e0"),
        );
    }
    for (index, row) in rows.iter().enumerate() {
        if index % 2 == 1 {
            background = background.add(
                rect(
                    MARGIN,
                    row.top,
                    width - 2.0 * MARGIN,
                    row.height(),
                    "#000000",
                )
                .set("fill-opacity", 0.035),
            );
        }
    }

    // Operation boxes: from a call to the same thread's next return (or to
    // the last row, if the execution stopped first).
    let mut boxes = Group::new();
    for (index, row) in rows.iter().enumerate() {
        if row.kind != Kind::Call {
            continue;
        }
        let end = rows[index + 1..]
            .iter()
            .position(|later| later.lane == row.lane && later.kind == Kind::Return)
            .map(|offset| index + 1 + offset);
        let bottom = match end {
            Some(end) => rows[end].top + rows[end].height(),
            None => lanes_bottom,
        };
        let lane = row.lane;
        let mut shape = rect(
            lane_x[lane] + 4.0,
            row.top + 1.0,
            lane_widths[lane] - 8.0,
            bottom - row.top - 2.0,
            BOX_FILLS[lane % BOX_FILLS.len()],
        )
        .set("rx", 5)
        .set("stroke", BOX_STROKES[lane % BOX_STROKES.len()])
        .set("stroke-width", 1.2);
        if end.is_none() {
            shape = shape.set("stroke-dasharray", "5 3");
        }
        boxes = boxes.add(shape);
    }

    // Labels, the lines under them, badges, marks, step numbers.
    let mut words = Group::new().set("font-family", MONO);
    for (index, row) in rows.iter().enumerate() {
        let x = lane_x[row.lane];
        let lane_width = lane_widths[row.lane];
        let is_step = index < steps.len();
        if is_step {
            words = words.add(
                text(
                    (index + 1).to_string(),
                    MARGIN + NUMBERS - 6.0,
                    row.baseline(),
                    SMALL,
                    QUIET,
                )
                .set("text-anchor", "end"),
            );
        }
        if let Some(mark) = &row.mark {
            words = words.add(
                rect(
                    x + 4.0,
                    row.top + 1.0,
                    lane_width - 8.0,
                    row.height() - 2.0,
                    VERDICT_FILL,
                )
                .set("stroke", VERDICT)
                .set("stroke-width", 2)
                .set("rx", 4),
            );
            words = words.add(
                text(
                    mark.as_str(),
                    x + lane_width - 12.0,
                    row.baseline(),
                    SMALL,
                    VERDICT,
                )
                .set("text-anchor", "end")
                .set("font-weight", "bold"),
            );
        }
        let (indent, colour, weight, size) = match row.kind {
            Kind::Call => (8.0, INK, "bold", EVENT),
            Kind::Return => (8.0, INK, "bold", EVENT),
            Kind::Access if row.stale => (INDENT + 6.0, STALE, "bold", EVENT),
            Kind::Access => (INDENT + 6.0, INK, "normal", EVENT),
            Kind::Other if !is_step => (8.0, VERDICT, "bold", EVENT),
            Kind::Other => (8.0, QUIET, "normal", EVENT),
        };
        let mut label = text(row.label.as_str(), x + indent, row.baseline(), size, colour)
            .set("font-weight", weight);
        if row.kind == Kind::Other && is_step {
            label = label.set("font-style", "italic");
        }
        words = words.add(label);
        if let Some((badge, colour)) = row.badge {
            let badge_x = x + indent + chars_width(&row.label, EVENT) + 10.0;
            let badge_width = chars_width(badge, SMALL) + 10.0;
            words = words.add(
                rect(
                    badge_x,
                    row.top + ROW_PAD / 2.0 + 1.0,
                    badge_width,
                    LINE - 2.0,
                    colour,
                )
                .set("rx", 7),
            );
            words = words.add(
                text(
                    badge,
                    badge_x + badge_width / 2.0,
                    row.baseline() - 1.0,
                    SMALL,
                    "#ffffff",
                )
                .set("text-anchor", "middle")
                .set("font-weight", "bold"),
            );
        }
        for (line_index, (line, tone)) in row.lines.iter().enumerate() {
            let mut line_text = text(
                line.as_str(),
                x + INDENT * 2.0,
                row.baseline() + LINE * (line_index + 1) as f64,
                SMALL,
                tone.colour(),
            );
            if *tone == Tone::Stale {
                line_text = line_text.set("font-weight", "bold");
            }
            words = words.add(line_text);
        }
    }

    // Links between rows.
    let mut links = Vec::new();
    for (index, step) in steps.iter().enumerate() {
        let to = index;
        let mut reads: Vec<&Read> = step.reads.iter().collect();
        if let Some(read) = step.cas.as_ref().and_then(|cas| cas.read.as_ref()) {
            reads.push(read);
        }
        for read in reads {
            if let Source::Step(source) = read.source {
                let across = lane_of(source) != rows[to].lane;
                links.push(Link {
                    from: source - 1,
                    to,
                    colour: if across { LINK } else { OWN_LINK },
                    marker: if across { "arrow-link" } else { "arrow-own" },
                    dash: None,
                    label: None,
                });
            }
            if let Some(missed) = &read.missed {
                links.push(Link {
                    from: missed.step - 1,
                    to,
                    colour: STALE,
                    marker: "arrow-stale",
                    dash: Some("7 4"),
                    label: Some("missed"),
                });
            }
        }
        if let Some(cas) = &step.cas {
            if let (false, Some(winner)) = (cas.won, cas.lost_to) {
                links.push(Link {
                    from: winner - 1,
                    to,
                    colour: LOST,
                    marker: "arrow-lost",
                    dash: Some("2 3"),
                    label: Some("lost to"),
                });
            }
        }
    }
    let mut arrows = Group::new().set("fill", "none").set("font-family", SANS);
    let mut arriving = vec![0usize; rows.len()];
    for link in &links {
        let (from, to) = (&rows[link.from], &rows[link.to]);
        // Several links into one row: spread their ends a little.
        let spread = arriving[link.to] as f64 * 4.0;
        arriving[link.to] += 1;
        let (y1, y2) = (from.anchor(), to.anchor() + spread.min(LINE / 2.0));
        let data = if from.lane == to.lane {
            // In the gutter outside the lanes where there is one, so that
            // links between threads stay apart from links within one.
            let last = to.lane + 1 == lane_widths.len() && to.lane > 0;
            let (x, outwards) = if last {
                (lane_x[to.lane] + lane_widths[to.lane] + 2.0, 1.0)
            } else {
                (lane_x[to.lane] - 2.0, -1.0)
            };
            let bulge = outwards * (GUTTER - 6.0).min(10.0 + (y2 - y1).abs() / 12.0);
            Data::new().move_to((round(x), round(y1))).cubic_curve_to((
                round(x + bulge),
                round(y1),
                round(x + bulge),
                round(y2),
                round(x),
                round(y2),
            ))
        } else {
            let (x1, x2) = if to.lane > from.lane {
                (lane_x[from.lane] + lane_widths[from.lane], lane_x[to.lane])
            } else {
                (lane_x[from.lane], lane_x[to.lane] + lane_widths[to.lane])
            };
            Data::new()
                .move_to((round(x1), round(y1)))
                .line_to((round(x2), round(y2)))
        };
        let mut path = Path::new()
            .set("d", data)
            .set("stroke", link.colour)
            .set("stroke-width", if link.dash.is_some() { 1.8 } else { 1.4 })
            .set("marker-end", format!("url(#{})", link.marker));
        if let Some(dash) = link.dash {
            path = path.set("stroke-dasharray", dash);
        }
        arrows = arrows.add(path);
        if let (Some(label), true) = (link.label, from.lane != to.lane) {
            let (x1, x2) = (
                lane_x[from.lane.min(to.lane)] + lane_widths[from.lane.min(to.lane)],
                lane_x[from.lane.max(to.lane)],
            );
            // Near the load's end, where links are apart.
            let t = 0.75;
            let (mx, my) = if to.lane > from.lane {
                (x1 + (x2 - x1) * t, y1 + (y2 - y1) * t)
            } else {
                (x2 - (x2 - x1) * t, y1 + (y2 - y1) * t)
            };
            arrows = arrows.add(
                text(label, mx, my - 5.0, 10.0, link.colour)
                    .set("text-anchor", "middle")
                    .set("font-style", "italic"),
            );
        }
    }

    // The verdict.
    let mut footer = Group::new().set("font-family", SANS);
    y = lanes_bottom + 24.0;
    let detected = if verdict.contains("leaked") {
        "after the last step every thread has finished and the deque is dropped; loom then finds \
         an allocation of the deque's that was never freed: a leak."
            .to_string()
    } else if stopped_by_loom && !race {
        "the execution panicked after the last step drawn, so no thread finished; the deque's \
         log ends there."
            .to_string()
    } else if stopped_by_loom {
        "loom stopped the execution at the thread's next access: a slot's bytes read and written \
         with no happens-before between them; the deque's log ends at the last step drawn."
            .to_string()
    } else {
        "after the last step every thread has finished and the deque is dropped; the ledger, \
         which saw every push and every take, finds the promise broken."
            .to_string()
    };
    let mut verdict_lines: Vec<(String, &str, &str)> = Vec::new();
    for line in wrap(&format!("verdict: {verdict}"), wrap_at.saturating_sub(4)) {
        verdict_lines.push((line, VERDICT, "bold"));
    }
    for line in wrap(&detected, wrap_at.saturating_sub(4)) {
        verdict_lines.push((line, INK, "normal"));
    }
    let verdict_height = 16.0 + verdict_lines.len() as f64 * (CAPTION + 6.0);
    footer = footer.add(
        rect(MARGIN, y, text_width, verdict_height, VERDICT_FILL)
            .set("stroke", VERDICT)
            .set("stroke-width", 2)
            .set("rx", 6),
    );
    let mut line_y = y + 8.0;
    for (line, colour, weight) in verdict_lines {
        line_y += CAPTION + 6.0;
        footer = footer.add(
            text(line, MARGIN + 12.0, line_y - 3.0, CAPTION, colour).set("font-weight", weight),
        );
    }
    y += verdict_height + 26.0;

    // The legend, with the rule that derives the links.
    let legend: [(&str, &str, Option<&str>, &str); 4] = [
        (
            LINK,
            "arrow-link",
            None,
            "a load (a CAS, a read-modify-write) read the store this arrow starts at, made by another thread",
        ),
        (
            OWN_LINK,
            "arrow-own",
            None,
            "the same, from a store of the thread's own (drawn beside its lane)",
        ),
        (
            STALE,
            "arrow-stale",
            Some("7 4"),
            "STALE: a newer store to that variable that the load did not see",
        ),
        (
            LOST,
            "arrow-lost",
            Some("2 3"),
            "a CAS that lost, from the CAS that won with the same expected value (or the newest store)",
        ),
    ];
    for (colour, marker_id, dash, meaning) in legend {
        let mut sample = Line::new()
            .set("x1", MARGIN)
            .set("y1", round(y - 4.0))
            .set("x2", MARGIN + 48.0)
            .set("y2", round(y - 4.0))
            .set("stroke", colour)
            .set("stroke-width", 1.6)
            .set("marker-end", format!("url(#{marker_id})"));
        if let Some(dash) = dash {
            sample = sample.set("stroke-dasharray", dash);
        }
        footer = footer.add(sample);
        footer = footer.add(text(meaning, MARGIN + 62.0, y, 12.0, INK));
        y += 20.0;
    }
    footer = footer.add(
        rect(MARGIN + 6.0, y - 14.0, 36.0, 16.0, VERDICT_FILL)
            .set("stroke", VERDICT)
            .set("stroke-width", 2)
            .set("rx", 4),
    );
    footer = footer.add(text(
        "framed in red: the steps the verdict is about; WON and LOST: which CAS succeeded",
        MARGIN + 62.0,
        y,
        12.0,
        INK,
    ));
    y += 20.0;
    let rule = "How the links are found: the atomics log the value of each access, not which store a load \
                read. loom runs one thread at a time and each access is logged as it happens, so the log \
                is in execution order; the lab takes a load to have read the last store of that value to \
                that variable before it in the log (or the initial value, if none), and calls it STALE \
                when another store to the variable came after that one and before the load. Every \
                interleaving of a sequentially consistent machine reads the newest store; a STALE load \
                is weak memory at work.";
    y += 4.0;
    for line in wrap(rule, (text_width / (12.0 * GLYPH)) as usize) {
        footer = footer.add(text(line, MARGIN, y, 12.0, QUIET));
        y += 17.0;
    }
    let height = (y + MARGIN - 10.0).ceil();

    document = document
        .set("width", width)
        .set("height", height)
        .set("viewBox", (0, 0, width, height))
        .add(Title::new(format!(
            "fence lab: the counterexample loom finds for the mutant {}",
            counterexample.mutant.name()
        )))
        .add(defs)
        // The page first, under everything.
        .add(rect(0.0, 0.0, width, height, "#ffffff"))
        .add(background)
        .add(caption)
        .add(headers)
        .add(boxes)
        .add(words)
        .add(arrows)
        .add(footer);
    Diagram {
        svg: document.to_string(),
        width: width as u32,
        height: height as u32,
        labels,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::Failure;
    use crate::Mutant;

    fn counterexample(trace: &[&str], violation: &str) -> Counterexample {
        Counterexample {
            mutant: Mutant::StealFence,
            scenario: "a_scenario",
            threads: 3,
            preemption_bound: Some(2),
            correct_interleavings: 100,
            correct_elapsed: std::time::Duration::ZERO,
            correct_failure: None,
            failing_interleaving: 7,
            failure: Failure {
                violation: violation.to_string(),
                trace: trace.iter().map(|line| line.to_string()).collect(),
                found_by_ledger: true,
            },
        }
    }

    /// The `<text>` contents of a drawing, in document order.
    fn texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|part| part.split_once('>'))
            .filter_map(|(_, rest)| rest.split_once("</text>"))
            .map(|(content, _)| content.trim().to_string())
            .collect()
    }

    #[test]
    fn the_owner_gets_the_first_lane_and_thieves_follow_in_order() {
        let drawn = draw(&counterexample(
            &[
                "ThreadId(2): thief 2 starts",
                "ThreadId(1): thief 1 starts",
                "ThreadId(0): owner calls pop()",
                "ThreadId(0): owner's pop returns None",
            ],
            "task 1 was lost: pushed, never taken, never dropped",
        ));
        let texts = texts(&drawn.svg);
        let header = |name: &str| texts.iter().position(|text| text == name);
        assert!(header("owner") < header("thief 1") && header("thief 1") < header("thief 2"));
        assert!(header("owner").is_some());
    }

    #[test]
    fn both_returns_of_a_task_taken_twice_are_marked() {
        let drawn = draw(&counterexample(
            &[
                "ThreadId(0): owner calls pop()",
                "ThreadId(1): thief 1 calls steal()",
                "ThreadId(0): owner's pop returns Some(task 2)",
                "ThreadId(1): thief 1's steal returns Success(task 2)",
                "ThreadId(2): thief 2 calls steal()",
                "ThreadId(2): thief 2's steal returns Success(task 1)",
            ],
            "task 2 was taken twice: by owner's pop and by thief 1's steal",
        ));
        let marks = texts(&drawn.svg)
            .iter()
            .filter(|text| *text == "✗ task 2 taken twice")
            .count();
        assert_eq!(marks, 2);
    }
}
