#!/usr/bin/env python3
"""Copies the mutation matrix's results (model-tests/mutation-matrix.tsv)
into the two tables of proofs-notes that quote them: obligations.md's
matrix-table (verdict, scenario or argument, interleavings, shuttle, miri;
the genmc column from model-tests/genmc/genmc-results.tsv, "not run" for
a mutant of model-tests/genmc/mutant-scenarios.tsv without a row there;
the last column, the note's own reading, is kept) and injector.md's
injector-matrix-table (the same genmc column). deque/tests/proofs_notes.rs checks that the tables
agree with the matrix file; this script makes them agree.

Usage: python3 model-tests/matrix-to-notes.py (from the repository root)."""
import pathlib
import re

root = pathlib.Path(__file__).resolve().parent.parent
rows = {}
for line in (root / "model-tests/mutation-matrix.tsv").read_text().splitlines()[1:]:
    mutant, verdict, scenario, interleavings, _seconds, shuttle, miri, _violation = line.split("\t")
    rows[mutant] = (verdict, scenario, interleavings, shuttle, miri)

genmc_dir = root / "model-tests/genmc"
genmc_mutants = {
    line.split("\t")[0]
    for line in (genmc_dir / "mutant-scenarios.tsv").read_text().splitlines()[1:]
}
genmc_rows = {}
for line in (genmc_dir / "genmc-results.tsv").read_text().splitlines()[1:]:
    mutant, scenario, verdict, executions, seconds, *_ = line.split("\t")
    genmc_rows[mutant] = (scenario, verdict, executions, seconds)


def genmc(mutant):
    """The GenMC column's cell: the mutant's row of genmc-results.tsv."""
    if mutant not in genmc_rows:
        return "not run" if mutant in genmc_mutants else "—"
    scenario, verdict, executions, seconds = genmc_rows[mutant]
    detail = {
        "killed": f"{seconds} s",
        "survived": f"all {executions} executions",
        "unfinished": f"stopped at {seconds} s",
    }.get(verdict, f"{seconds} s")
    return f"{verdict} (`{scenario}`, {detail})"


def where(verdict, scenario):
    """A killing scenario in code style, an argument as a link."""
    if "#" in scenario:
        anchor = scenario.split("#", 1)[1]
        return f"[{anchor}](#{anchor})"
    return f"`{scenario}`"


def rewrite(path, start, end, row_of):
    text = path.read_text()
    begin = text.index(start)
    finish = text.index(end, begin)
    lines = text[begin:finish].split("\n")
    out = []
    for line in lines:
        match = re.match(r"\| `([a-z-]+)` \|", line)
        if match and match.group(1) in rows:
            line = row_of(match.group(1), line)
        elif match:
            raise SystemExit(f"{path}: {match.group(1)} is not in the matrix file")
        out.append(line)
    path.write_text(text[:begin] + "\n".join(out) + text[finish:])


def cells(line):
    """The cells of a table row, without the outer bars."""
    return [cell.strip() for cell in line.strip().strip("|").split(" | ")]


def obligations_row(mutant, line):
    verdict, scenario, interleavings, shuttle, miri = rows[mutant]
    # The note's own reading is kept.
    reading = cells(line)[-1]
    return f"| `{mutant}` | {verdict} | {where(verdict, scenario)} | {interleavings} | {shuttle} | {miri} | {genmc(mutant)} | {reading} |"


def injector_row(mutant, line):
    verdict, scenario, *_ = rows[mutant]
    place = where(verdict, scenario) if "#" in scenario else scenario
    return f"| `{mutant}` | {verdict} | {place} | {genmc(mutant)} |"


rewrite(root / "proofs-notes/obligations.md", "<!-- matrix-table", "<!-- end matrix-table -->", obligations_row)
rewrite(root / "proofs-notes/injector.md", "<!-- injector-matrix-table", "<!-- end injector-matrix-table -->", injector_row)
print("proofs-notes/obligations.md and proofs-notes/injector.md follow model-tests/mutation-matrix.tsv")
