#!/usr/bin/env bash
# How many interleavings lie beyond the test command's preemption bounds.
# For every loom scenario that the test command runs under a bound, runs it
# at that bound, then without any bound (CHASE_LEV_LOOM_EXHAUSTIVE=1), and if
# that does not finish within the budget, at the bound plus 1, 2, ...
# (CHASE_LEV_LOOM_RAISE) until a run does not finish; each run under loom's
# LOOM_MAX_DURATION. Prints a Markdown table: scenario, bound,
# interleavings, seconds, and whether the run finished. Not part of CI.
#
# Usage: bash model-tests/interleavings.sh [seconds per run] [scenario ...]
#   default budget 3600 s (an hour per run); default scenarios: every
#   bounded one of model-tests/src/scenarios.rs.
set -euo pipefail
cd "$(dirname "$0")/.."
budget=${1:-3600}
shift || true
if [ $# -gt 0 ]; then
    scenarios=("$@")
else
    # A scenario's `name:` line comes a few lines before its
    # `preemption_bound: Some(k)` line.
    mapfile -t scenarios < <(awk '/name: "/ { gsub(/.*name: "|",?$/, ""); name = $0 }
        /preemption_bound: Some/ { print name }' model-tests/src/scenarios.rs)
fi
# The suite's binary, run directly, so that several of these scripts can
# run side by side (cargo holds its lock while it runs a test).
suite=$(cargo test --release -p model-tests --features loom --test loom_suite --no-run 2>&1 |
    sed -n 's/.*Executable tests\/loom_suite.rs (\(.*\))$/\1/p')

# One run: prints "bound|interleavings|seconds|finished".
run() {
    local scenario=$1
    shift
    local line
    line=$(env "$@" CHASE_LEV_LOOM_ONLY="$scenario" LOOM_MAX_DURATION="$budget" \
        "$suite" 2>/dev/null | grep -E "^$scenario +family" || true)
    python3 - "$line" <<'PY'
import re, sys
line = sys.argv[1]
m = re.search(r"threads\s+(.*?)\s+(\d+) interleavings\s+([\d.]+) s", line)
if not m:
    print("?|?|?|no result")
    sys.exit()
bound, count, seconds = m.groups()
finished = "no (budget)" if "partial" in bound else "yes"
bound = bound.replace(", partial", "").replace("preemption bound ", "").replace("bound ", "")
bound = "none" if bound.startswith(("exhaustive", "unbounded")) else bound
print(f"{bound}|{count}|{seconds}|{finished}")
PY
}

echo "| scenario | preemption bound | interleavings | seconds | finished |"
echo "|---|---:|---:|---:|---|"
for scenario in "${scenarios[@]}"; do
    # The test command's bound, then no bound at all: loom's exhaustive
    # search (with its partial-order reduction) may need fewer interleavings
    # than a bounded one.
    echo "| \`$scenario\` | $(run "$scenario" | sed 's/|/ | /g') |"
    result=$(run "$scenario" CHASE_LEV_LOOM_EXHAUSTIVE=1)
    echo "| \`$scenario\` | ${result//|/ | } |"
    [ "${result##*|}" = yes ] && continue
    # Not within the budget: the bounds above the test command's, one by
    # one, until a run no longer finishes (ten at the most).
    for raise in $(seq 1 10); do
        result=$(run "$scenario" CHASE_LEV_LOOM_RAISE="$raise")
        echo "| \`$scenario\` | ${result//|/ | } |"
        [ "${result##*|}" = yes ] || break
    done
done
