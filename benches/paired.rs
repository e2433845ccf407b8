//! Paired ratios and their verdicts: two programs (or two deques) measured
//! turn by turn on the same moments of a shared machine give one ratio per
//! turn; the figure is the median of those ratios with its distribution-free
//! interval (about 95%): order statistics k and n - k + 1 of the n ratios,
//! k = (n - 1.96 sqrt(n)) / 2. Against a target "at most `bound`": met when
//! the whole interval is at or below it, not met when the whole interval is
//! above it, and otherwise the runs cannot tell.

use std::path::Path;

/// The median of `values` (sorted here).
pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// A median with its distribution-free ~95% interval.
#[derive(Clone, Copy, Debug)]
pub struct Interval {
    pub median: f64,
    pub low: f64,
    pub high: f64,
    pub n: usize,
}

/// The fewest values whose interval is worth a verdict: with n values the
/// widest interval, the least and the greatest, holds the median with
/// probability 1 - 2 / 2^n, under 95% below 6.
pub const FEWEST: usize = 6;

impl Interval {
    /// # Panics
    /// If `values` is empty.
    pub fn of(mut values: Vec<f64>) -> Interval {
        let n = values.len();
        assert!(n > 0, "no values");
        let median = median(&mut values);
        let k = (((n as f64 - 1.96 * (n as f64).sqrt()) / 2.0) as usize).max(1);
        Interval {
            median,
            low: values[k - 1],
            high: values[n - k],
            n,
        }
    }

    /// Against a target "at most `bound`".
    pub fn verdict(&self, bound: f64) -> &'static str {
        if self.n < FEWEST {
            "too few samples"
        } else if self.high <= bound {
            "met"
        } else if self.low > bound {
            "not met"
        } else {
            "cannot tell"
        }
    }

    /// The verdict against "at most `bound`" with the interval behind it:
    /// `met (30 runs, CI 0.930-0.970)`.
    pub fn judged(&self, bound: f64) -> String {
        format!(
            "{} ({} runs, CI {:.3}-{:.3})",
            self.verdict(bound),
            self.n,
            self.low,
            self.high
        )
    }

    /// `0.950 [0.930-0.970, n = 30]`.
    pub fn show(&self) -> String {
        format!(
            "{:.3} [{:.3}-{:.3}, n = {}]",
            self.median, self.low, self.high, self.n
        )
    }
}

/// A figure another program measured for the targets table: a label, its
/// target ("at most"), and the paired interval.
pub struct Row {
    pub label: String,
    pub target: f64,
    pub interval: Interval,
}

/// Writes `rows` to `path` as tab-separated lines under a `# header` line
/// (what ran, where and when), for the compare bench's targets table.
pub fn write_rows(path: &Path, header: &str, rows: &[Row]) {
    let mut text = format!("# {header}\n");
    for row in rows {
        let Interval {
            median,
            low,
            high,
            n,
        } = row.interval;
        text += &format!(
            "{}\t{}\t{median}\t{low}\t{high}\t{n}\n",
            row.label, row.target
        );
    }
    if let Err(error) = std::fs::write(path, text) {
        eprintln!("could not write {}: {error}", path.display());
    } else {
        println!("(written to {} for the targets table)", path.display());
    }
}

/// The `# header` line of a tab-separated file and the fields of its other
/// lines that do not start with `#`; nothing if the file is missing.
pub fn read_tsv(path: &Path) -> (String, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let header = text
        .lines()
        .next()
        .and_then(|line| line.strip_prefix("# "))
        .unwrap_or_default()
        .to_string();
    let lines = text
        .lines()
        .filter(|line| !line.starts_with('#'))
        .map(|line| line.split('\t').map(str::to_string).collect())
        .collect();
    (header, lines)
}

/// The header and rows `write_rows` wrote to `path`; none if it is missing.
pub fn read_rows(path: &Path) -> (String, Vec<Row>) {
    let (header, lines) = read_tsv(path);
    let rows = lines
        .iter()
        .filter_map(|fields| Row::parse(fields))
        .collect();
    (header, rows)
}

impl Row {
    /// A row from the first six fields of a line as `write_rows` writes it
    /// (label, target, median, low, high, n); `None` if one is missing or
    /// not a number. Later fields, if any, are the caller's.
    pub fn parse(fields: &[String]) -> Option<Row> {
        let number = |index: usize| fields.get(index)?.parse::<f64>().ok();
        Some(Row {
            label: fields.first()?.to_string(),
            target: number(1)?,
            interval: Interval {
                median: number(2)?,
                low: number(3)?,
                high: number(4)?,
                n: number(5)? as usize,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{read_rows, write_rows, Interval, Row};

    #[test]
    fn the_interval_of_thirty_values_is_their_ninth_and_twenty_second() {
        let interval = Interval::of((1..=30).map(f64::from).collect());
        assert_eq!(interval.median, 15.5);
        assert_eq!((interval.low, interval.high), (9.0, 22.0));
    }

    #[test]
    fn a_verdict_needs_the_whole_interval_on_one_side() {
        let interval = |low, high| Interval {
            median: (low + high) / 2.0,
            low,
            high,
            n: 30,
        };
        assert_eq!(interval(0.9, 0.99).verdict(1.0), "met");
        assert_eq!(interval(1.01, 1.1).verdict(1.0), "not met");
        assert_eq!(interval(0.95, 1.05).verdict(1.0), "cannot tell");
    }

    #[test]
    fn rows_read_back_as_written() {
        let path = std::env::temp_dir().join(format!("paired-rows-{}.tsv", std::process::id()));
        let interval = Interval {
            median: 1.5,
            low: 1.25,
            high: 2.0,
            n: 9,
        };
        let label = "a row".to_string();
        write_rows(
            &path,
            "a header",
            &[Row {
                label,
                target: 1.2,
                interval,
            }],
        );
        let (header, rows) = read_rows(&path);
        std::fs::remove_file(&path).unwrap();
        assert_eq!(header, "a header");
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].label.as_str(), rows[0].target), ("a row", 1.2));
        assert_eq!(rows[0].interval.high, 2.0);
        assert_eq!(rows[0].interval.n, 9);
    }
}
