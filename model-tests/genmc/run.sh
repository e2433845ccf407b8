#!/usr/bin/env bash
# Runs the GenMC scenarios (model-tests/genmc/src/main.rs) under Miri's GenMC
# mode, which explores every execution RC11 allows on the compiled crate, and
# prints, for each, its execution count and time (or the error it found).
# Builds the tool first if it is missing (../shared/genmc/build.sh beside
# the repository: a pinned nightly with rustc-dev, and Miri with GenMC from
# source; about 9 minutes on a quiet 2-core machine, 20-25 under load).
#
#   bash model-tests/genmc/run.sh                     every scenario, shipped code
#   bash model-tests/genmc/run.sh NAME...             those scenarios
#   bash model-tests/genmc/run.sh --mutant take-fence NAME...
#       the mutant build with that mutant planted (compiled in: this GenMC's
#       Miri cannot read the environment); a killed mutant is an error here
#   bash model-tests/genmc/run.sh --expect-kill take-fence NAME
#       as --mutant, and fails unless GenMC reports an error (the mutant is
#       killed); prints what it found
#   bash model-tests/genmc/run.sh --matrix [MUTANT...]
#       the GenMC column of the mutation matrix: each mutant of
#       mutant-scenarios.tsv (every ordering and fence mutant of
#       model-tests/mutants.md, with the scenario it runs on), or the ones
#       named, one after another, each in a build of its own; writes its
#       row of genmc-results.tsv (killed only when GenMC reports an
#       error). CHASE_LEV_GENMC_TIMEOUT (seconds, default 1500) stops a
#       run that has not finished: its verdict is then "unfinished".
#
# Exits non-zero if a scenario of the shipped code fails (or, with
# --expect-kill, if the mutant survives).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
sources=${CHASE_LEV_GENMC_SOURCES:-$repo/../shared/genmc}
home=${CHASE_LEV_GENMC_HOME:-$HOME/.cache/chase-lev-genmc}

mutant=""
expect_kill=0
matrix=0
while [ $# -gt 0 ]; do
    case "$1" in
        --mutant) mutant=$2; shift 2 ;;
        --expect-kill) mutant=$2; expect_kill=1; shift 2 ;;
        --matrix) matrix=1; shift ;;
        *) break ;;
    esac
done

if [ $matrix = 1 ]; then
    # Each mutant through this script (--mutant), its verdict from the
    # output: "killed" only when GenMC reported an error.
    table=$here/mutant-scenarios.tsv
    results=$here/genmc-results.tsv
    timeout=${CHASE_LEV_GENMC_TIMEOUT:-1500}
    if [ $# -gt 0 ]; then
        mutants=("$@")
    else
        read -r -a mutants <<<"$(tail -n +2 "$table" | cut -f1 | tr '\n' ' ')"
    fi
    header=$'mutant\tscenario\tverdict\texecutions\tseconds\twhat GenMC reported\tmachine'
    [ -f "$results" ] || echo "$header" >"$results"
    # Seconds are wall clock, the mutant build's compilation included.
    cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
    machine="$cpu, $(nproc) cores${CHASE_LEV_GENMC_SHARED:+, shared}"
    for name in "${mutants[@]}"; do
        scenario=$(awk -F'\t' -v m="$name" '$1 == m { print $2 }' "$table")
        if [ -z "$scenario" ]; then
            echo "genmc: $name is not in $table" >&2
            exit 2
        fi
        out=$(mktemp)
        start=$(date +%s)
        timeout "$timeout" bash "$0" --mutant "$name" "$scenario" >"$out" 2>&1 || true
        seconds=$(($(date +%s) - start))
        line=$(grep -E "^\[$name\] $scenario " "$out" | tail -n 1 || true)
        if grep -q -E '^error\[E|could not compile' "$out"; then
            verdict="did not build"
            executions=-
            report=$(grep -m1 -E '^error' "$out" | tr '\t' ' ')
        elif grep -q ' no error$' <<<"$line"; then
            verdict=survived
            executions=$(awk '{ print $3 }' <<<"$line")
            report="no error in $executions executions"
        elif grep -q ' error ' <<<"$line"; then
            verdict=killed
            # (This GenMC prints no execution count when it stops at an error.)
            report=$(grep -m1 -E '^(genmc scenario failed|error)' "$out" | tr '\t' ' ')
            # A panic in the crate (a debug assertion) makes this GenMC stop
            # in std's panic machinery, whose thread-local key it cannot
            # read: name the function that panicked.
            if grep -q 'std::panicking::panic_handler' "$out"; then
                panicked=$(grep -A1 'std::panicking::panic_handler' "$out" |
                    sed -n 's/^note: inside `\(.*\)`.*/\1/p' | head -n 1)
                report="a panic in ${panicked:-the crate} (then: $report)"
            fi
            executions=-
        else
            verdict=unfinished
            executions=-
            report="stopped after $timeout s, no error until then"
        fi
        row=$(printf '%s\t%s\t%s\t%s\t%s\t%s\t%s' "$name" "$scenario" "$verdict" \
            "$executions" "$seconds" "$report" "$machine")
        echo "$row"
        cp "$out" "${CHASE_LEV_GENMC_LOGS:-$here/target}/matrix-$name.log" 2>/dev/null || true
        rm -f "$out"
        # This mutant's row replaces its old one; rows in the table's order.
        {
            head -n 1 "$results"
            {
                tail -n +2 "$results" | awk -F'\t' -v m="$name" '$1 != m'
                echo "$row"
            } | awk -F'\t' -v order="$table" '
                BEGIN { while ((getline l < order) > 0) { split(l, f, "\t"); rank[f[1]] = ++n } }
                { print rank[$1] "\t" $0 }' | sort -n -k1,1 | cut -f2-
        } >"$results.new"
        mv "$results.new" "$results"
        if [ "${CHASE_LEV_GENMC_KEEP_TARGETS:-0}" != 1 ]; then
            rm -rf "$here/target/mutant-$name"
        fi
    done
    exit 0
fi

if [ ! -f "$sources/build.sh" ]; then
    echo "genmc: no GenMC sources at $sources (set CHASE_LEV_GENMC_SOURCES)" >&2
    exit 2
fi
bash "$sources/build.sh" | tail -n 1
# shellcheck disable=SC1091
. "$home/env.sh"
cd "$here"
cargo miri setup >/dev/null 2>&1 || cargo miri setup

flags="-Zmiri-genmc -Zmiri-genmc-verbose -Zmiri-disable-stacked-borrows"
if [ -n "$mutant" ]; then
    features=(--no-default-features --features mutants)
    export CHASE_LEV_GENMC_MUTANT=$mutant
    # A target directory per mutant: cargo-miri keeps the environment of the
    # build that made the binary and runs it with that one, so a binary
    # built for another mutant would run that mutant (measured).
    export CARGO_TARGET_DIR=$here/target/mutant-$mutant
else
    features=()
    unset CHASE_LEV_GENMC_MUTANT
fi
if [ $# -gt 0 ]; then
    scenarios=("$@")
else
    # With no name the binary fails and lists every scenario (GenMC runs it
    # as one execution).
    list=$(MIRIFLAGS="$flags" cargo miri run -q "${features[@]}" 2>&1 || true)
    read -r -a scenarios <<<"$(sed -n 's/.*name a scenario: //p' <<<"$list" | head -n 1)"
    if [ ${#scenarios[@]} -eq 0 ]; then
        echo "genmc: could not list the scenarios:" >&2
        echo "$list" >&2
        exit 1
    fi
fi

status=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for scenario in "${scenarios[@]}"; do
    start=$(date +%s%N)
    if MIRIFLAGS="$flags" cargo miri run -q "${features[@]}" -- "$scenario" >"$log" 2>&1; then
        ok=1
    else
        ok=0
    fi
    tenths=$((($(date +%s%N) - start) / 100000000))
    seconds="$((tenths / 10)).$((tenths % 10))"
    executions=$(sed -n 's/^Verification complete with \([0-9]*\) executions.*/\1/p' "$log" | tail -n 1)
    label=${mutant:+"[$mutant] "}$scenario
    if [ $ok = 1 ]; then
        printf '%-70s %8s executions %8s s  no error\n' "$label" "${executions:-?}" "$seconds"
        if [ $expect_kill = 1 ]; then
            echo "  the mutant survived" >&2
            status=1
        fi
    else
        found=$(grep -m1 -E 'genmc scenario failed|^error' "$log" || true)
        printf '%-70s %8s %8s s  %s\n' "$label" "error" "$seconds" "$found"
        if [ $expect_kill = 0 ]; then
            cat "$log" >&2
            status=1
        else
            grep -E 'genmc scenario failed|^error|-->' "$log" | head -n 4 | sed 's/^/  /'
        fi
    fi
done
exit $status
