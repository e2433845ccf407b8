//! Markdown tables as the benches print them.

/// Prints one row of a markdown table: the first cell left-aligned, the
/// others right-aligned, each padded to its column's width.
pub fn print_row<S: AsRef<str>>(cells: &[S], widths: &[usize]) {
    let mut line = String::from("|");
    for (column, (cell, &width)) in cells.iter().zip(widths).enumerate() {
        let cell = cell.as_ref();
        if column == 0 {
            line += &format!(" {cell:<width$} |");
        } else {
            line += &format!(" {cell:>width$} |");
        }
    }
    println!("{line}");
}

/// Prints the line under a table header with these column widths.
pub fn print_separator(widths: &[usize]) {
    let mut line = String::from("|");
    for width in widths {
        line += &"-".repeat(width + 2);
        line.push('|');
    }
    println!("{line}");
}
