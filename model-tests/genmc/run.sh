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
while [ $# -gt 0 ]; do
    case "$1" in
        --mutant) mutant=$2; shift 2 ;;
        --expect-kill) mutant=$2; expect_kill=1; shift 2 ;;
        *) break ;;
    esac
done

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
