#!/usr/bin/env bash
# Instructions per join on the fork-join pool of demos/forkjoin against
# rayon::join (one thread each: the push-run-pop fast path), counted by
# callgrind. Every thread's instructions count (the pool threads run the work,
# the main thread waits), minus the same recursion run serially, divided by
# the number of joins.
#
# Usage: benches/join_overhead.sh [n] [cutoff]   (default 24 2)
set -euo pipefail

cd "$(dirname "$0")/.."
target_dir="${CARGO_TARGET_DIR:-target}"
command -v valgrind >/dev/null || { echo "join_overhead.sh: valgrind is not installed" >&2; exit 1; }
n="${1:-24}"
cutoff="${2:-2}"
cargo build --quiet --profile bench -p chase-lev-forkjoin --example join_overhead
binary="$target_dir/release/examples/join_overhead"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# All instructions of the process from the measured function down, over
# every thread (callgrind writes one file per thread with --separate-threads=no,
# the default, so the totals line already sums them).
count() {
    valgrind --tool=callgrind --callgrind-out-file="$work/out.$1" \
        "$binary" "$1" "$n" "$cutoff" >"$work/stdout.$1" 2>/dev/null
    sed -n 's/^totals: *\([0-9]*\).*/\1/p;s/^summary: *\([0-9]*\).*/\1/p' "$work/out.$1" | head -1
}

serial=$(count serial)
joins=$(sed -n 's/^joins //p' "$work/stdout.serial")
printf 'fib(%s), cutoff %s: %s joins\n' "$n" "$cutoff" "$joins"
printf '| %-10s | %22s |\n' "pool" "instructions per join"
printf '|%s|%s|\n' "------------" "-----------------------:"
for pool in chase-lev rayon; do
    total=$(count "$pool")
    # Each pool's whole-process count includes its own start-up; the serial
    # run's count (same binary, no pool) is subtracted to leave the joins.
    awk -v t="$total" -v s="$serial" -v j="$joins" -v p="$pool" \
        'BEGIN { printf "| %-10s | %22.1f |\n", p, (t - s) / j }'
done
