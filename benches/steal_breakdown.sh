#!/usr/bin/env bash
# Where a steal spends its instructions: chase-lev, st3 and crossbeam-deque,
# for a steal that finds a task with the owner idle (`steal-only-1k`: the
# owner's pushes are outside the counted function) and for a steal from an
# empty deque (`steal-empty`). Callgrind counts every instruction of the
# measured function (and what it calls) with its address and source line;
# benches/steal_instructions.py lists them, per steal, with the
# innermost inlined source line and an L on the locked ones
# (benches/locked_instructions.py's definition). The listings go to
# $target_dir/steal-breakdown/<deque>.<case>.txt, callgrind_annotate's
# per-source-line view (--auto=yes) to <deque>.<case>.annotate.txt, the
# profiles themselves to <deque>.<case>.callgrind; the summary to stdout.
# docs/benchmarks.md#the-steal-instruction-by-instruction says how to read them.
#
# Usage: benches/steal_breakdown.sh
# Uses $CARGO_TARGET_DIR (default: target/ of the workspace). About 30 s.
set -euo pipefail

cd "$(dirname "$0")/.."
target_dir="${CARGO_TARGET_DIR:-target}"
command -v valgrind >/dev/null || { echo "steal_breakdown.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }

# The bench profile: optimised, with line tables (debug = 1).
cargo build --quiet --profile bench -p chase-lev-bench --example owner_paths
binary="$target_dir/release/examples/owner_paths"
out="$target_dir/steal-breakdown"
mkdir -p "$out"

printf '| %-15s | %-13s | %14s | %16s |\n' deque case "instr. / steal" "locked / steal"
printf '|%s|%s|%s|%s|\n' "-----------------" "---------------" "---------------:" "-----------------:"
for case in steal-only-1k steal-empty; do
    for deque in chase-lev st3 crossbeam-deque; do
        profile="$out/$deque.$case.callgrind"
        operations=$(valgrind --tool=callgrind --callgrind-out-file="$profile" \
            --dump-instr=yes --dump-line=yes \
            --collect-atstart=no --toggle-collect='*measured_steal*' \
            "$binary" "$deque" "$case" 2>/dev/null | sed -n 's/^operations //p')
        instructions=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$profile")
        locked=$(python3 benches/locked_instructions.py "$profile" "$binary")
        python3 benches/steal_instructions.py "$profile" "$binary" "$operations" \
            > "$out/$deque.$case.txt"
        callgrind_annotate --auto=yes --show-percs=no "$profile" > "$out/$deque.$case.annotate.txt" 2>&1 || true
        awk -v d="$deque" -v c="$case" -v i="$instructions" -v l="$locked" -v o="$operations" \
            'BEGIN { printf "| %-15s | %-13s | %14.2f | %16.3f |\n", d, c, i / o, l / o }'
    done
done
echo
echo "(listings in $out/)"
