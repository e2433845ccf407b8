//! The speedup plot: speedup against P for both steal ends, with the ideal
//! line and the speedup the greedy bound `T1/P + T∞` would allow.

use chase_lev_simulator::dag::Dag;
use chase_lev_simulator::experiment::Summary;
use chase_lev_simulator::schedule::StealEnd;
use plotters::prelude::*;
use std::error::Error;
use std::path::Path;

/// Writes the plot as an SVG file at `path`.
pub fn speedup_svg(path: &Path, dag: &Dag, summaries: &[Summary]) -> Result<(), Box<dyn Error>> {
    if let Some(directory) = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
    {
        std::fs::create_dir_all(directory)?;
    }
    let largest_p = summaries.iter().map(|s| s.workers).max().unwrap_or(1) as f64;
    let root = SVGBackend::new(path, (800, 600)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "Work stealing on fib graph: T1 = {}, T∞ = {}, mean of {} seeds",
                dag.work(),
                dag.span(),
                summaries.first().map_or(0, |s| s.runs)
            ),
            ("sans-serif", 22),
        )
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..largest_p * 1.05, 0f64..largest_p * 1.05)?;
    chart
        .configure_mesh()
        .x_desc("workers P")
        .y_desc("speedup T1 / T_P")
        .label_style(("sans-serif", 16))
        .axis_desc_style(("sans-serif", 18))
        .draw()?;

    let worker_counts: Vec<f64> = summaries
        .iter()
        .filter(|s| s.end == StealEnd::Oldest)
        .map(|s| s.workers as f64)
        .collect();
    let ideal = RGBColor(160, 160, 160);
    chart
        .draw_series(LineSeries::new(
            worker_counts.iter().map(|&p| (p, p)),
            ideal,
        ))?
        .label("ideal: speedup = P")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], ideal));
    // Wide and pale: the measured curve of the oldest end lies almost on it.
    let bound = RGBColor(150, 220, 150).stroke_width(6);
    let work = dag.work() as f64;
    let span = dag.span() as f64;
    chart
        .draw_series(LineSeries::new(
            worker_counts.iter().map(|&p| (p, work / (work / p + span))),
            bound,
        ))?
        .label("T1 / (T1/P + T∞)")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], bound));

    for (end, color, label) in [
        (
            StealEnd::Oldest,
            BLUE,
            "thief takes the oldest (Stealer::steal)",
        ),
        (StealEnd::Newest, RED, "thief takes the newest (ablation)"),
    ] {
        let points: Vec<(f64, f64)> = summaries
            .iter()
            .filter(|s| s.end == end)
            .map(|s| (s.workers as f64, s.speedup(dag)))
            .collect();
        chart
            .draw_series(LineSeries::new(points, color.stroke_width(2)).point_size(4))?
            .label(label)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 16))
        .draw()?;
    root.present()?;
    Ok(())
}
