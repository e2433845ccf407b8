#!/usr/bin/env bash
# rayon on chase-lev against rayon on crossbeam-deque: the same program
# (tests/drop-in/rayon-on-chase-lev), the same rayon and rayon-core (from
# tests/drop-in/Cargo.lock), built twice: once through the workspace's
# `[patch.crates-io]` (crossbeam-deque = chase-lev through
# crossbeam-deque-drop-in/), once from a copy of the
# workspace without the patch (crossbeam-deque from crates.io). Then runs of
# the two binaries alternate (which one goes first alternates too), each run
# one process timing one workload's parallel part in-process, and the table
# gives each build's median and the ratio of the medians.
#
# Usage: benches/rayon_on_chase_lev.sh [runs]   (default 11 per build
# and workload). Needs only cargo, coreutils and awk;
# crossbeam-deque is fetched from crates.io for the unpatched build.
#
# With RAYON_WITHOUT_POP_FENCE=1, a third build joins the rotation: chase-lev
# with the SeqCst fence of the owner's pop removed, an incorrect deque (a
# thief and the owner can both take a task: mutant `take-fence`) built only
# to bound what any pop with fewer barriers (a split deque's private pops,
# proofs-notes/fast-paths.md) could gain rayon. Its binary is never a
# candidate: `check` is not run on it.
#
# Both builds fix their code alignment (functions at 64 bytes, blocks that
# are jumped to at 32), so that where the linker happens to put the hot loops
# moves the two binaries less: without it the control row, the same serial
# code in both, drifted further (docs/benchmarks.md#rayon-on-chase-lev).
# Set RUSTFLAGS to build otherwise.
#
# With RAYON_CALLGRIND=1 (needs valgrind), each build also runs each
# workload once on one thread (RAYON_NUM_THREADS=1) under callgrind: the
# instructions of the whole process (start-up, input and check included,
# the same code in both builds), exact and repeatable where times are not.
#
# The results (medians, the paired ratio with its interval and run count,
# instructions if counted) also go to $CARGO_TARGET_DIR/rayon-on-chase-lev.tsv
# (default: target/), which the compare bench's targets table reads.
set -euo pipefail

cd "$(dirname "$0")/.."
runs="${1:-11}"
export RUSTFLAGS="${RUSTFLAGS--C llvm-args=-align-all-functions=6 -C llvm-args=-align-all-nofallthru-blocks=5}"
root="$PWD"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
work="$target_dir/rayon-on-chase-lev-bench"
mkdir -p "$work"

echo "building rayon on chase-lev (tests/drop-in, through [patch.crates-io])"
(cd tests/drop-in && cargo build --quiet --locked --release -p rayon-on-chase-lev)
cp tests/drop-in/target/release/rayon-on-chase-lev "$work/on-chase-lev"
(cd tests/drop-in && cargo tree --locked -e normal -i crossbeam-deque --depth 0)

echo "building rayon on crossbeam-deque (the same workspace without the patch)"
unpatched="$work/unpatched"
rm -rf "$unpatched/rayon-on-chase-lev"
mkdir -p "$unpatched"
cp -r tests/drop-in/rayon-on-chase-lev "$unpatched/"
rm -rf "$unpatched/rayon-on-chase-lev/target"
# The workspace manifest minus the [patch.crates-io] table (and any member
# but the program); the lock keeps rayon's versions, crossbeam-deque resolves
# anew.
sed -e '/^\[patch\.crates-io\]/,/^$/d' \
    -e 's/^members = .*/members = ["rayon-on-chase-lev"]/' \
    tests/drop-in/Cargo.toml >"$unpatched/Cargo.toml"
cp tests/drop-in/Cargo.lock "$unpatched/Cargo.lock"
(cd "$unpatched" && cargo build --quiet --release -p rayon-on-chase-lev)
cp "$unpatched/target/release/rayon-on-chase-lev" "$work/on-crossbeam"
(cd "$unpatched" && cargo tree -e normal -i crossbeam-deque --depth 0)

builds=(on-chase-lev on-crossbeam)
if [[ "${RAYON_WITHOUT_POP_FENCE:-0}" == 1 ]]; then
    echo "building the bound: chase-lev without its pop fence (incorrect, for measurement only)"
    bound="$work/without-pop-fence-tree"
    rm -rf "$bound"
    mkdir -p "$bound/deque" "$bound/tests/drop-in" "$bound/crossbeam-deque-drop-in"
    cp -r deque/Cargo.toml deque/src deque/tests "$bound/deque/"
    cp -r crossbeam-deque-drop-in/Cargo.toml crossbeam-deque-drop-in/src "$bound/crossbeam-deque-drop-in/"
    cp -r tests/drop-in/Cargo.toml tests/drop-in/Cargo.lock \
        tests/drop-in/rayon-on-chase-lev "$bound/tests/drop-in/"
    rm -rf "$bound/tests/drop-in/rayon-on-chase-lev/target"
    # A workspace of the deque alone, for its inherited settings.
    awk '/^members = \[/ {print "members = [\"deque\"]"; skip = 1; next}
         skip && /^\]/ {skip = 0; next}
         skip || /^exclude = / {next}
         {print}' Cargo.toml >"$bound/Cargo.toml"
    fence='site!(TakeFence, fence(SeqCst));'
    [ "$(grep -cF "$fence" "$bound/deque/src/deque.rs")" = 1 ] || {
        echo "the pop's fence line is not in deque/src/deque.rs once any more: update this script" >&2
        exit 1
    }
    # A copy of the tree, for this measurement only: the line removed.
    sed -i "s/site!(TakeFence, fence(SeqCst));//" "$bound/deque/src/deque.rs"
    (cd "$bound/tests/drop-in" && cargo build --quiet --locked --release -p rayon-on-chase-lev)
    cp "$bound/tests/drop-in/target/release/rayon-on-chase-lev" "$work/without-pop-fence"
    builds+=(without-pop-fence)
fi

"$work/on-chase-lev" check >/dev/null
"$work/on-crossbeam" check --any-deque >/dev/null

workloads=(fib-join fib-cutoff sort sum fib-serial)
describe() {
    case "$1" in
        fib-join) echo "fib(32), a join at every level" ;;
        fib-cutoff) echo "fib(38), joins only for n > 20" ;;
        sort) echo "par_sort_unstable, 4M u64" ;;
        sum) echo "par_iter().sum(), 10M u64" ;;
        fib-serial) echo "control: fib(35) without rayon" ;;
    esac
}

samples="$work/samples"
: >"$samples"
echo "running: $runs runs per build and workload, alternating"
for ((run = 0; run < runs; run++)); do
    for workload in "${workloads[@]}"; do
        # Each build goes first in turn.
        order=("${builds[@]:run % ${#builds[@]}}" "${builds[@]:0:run % ${#builds[@]}}")
        for build in "${order[@]}"; do
            nanoseconds=$("$work/$build" bench "$workload" | awk '{print $2}')
            echo "$workload $build $nanoseconds $run" >>"$samples"
        done
    done
done

# Instructions of one process, on one thread, under callgrind.
instructions() { # instructions <build> <workload>
    RAYON_NUM_THREADS=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        "$work/$1" bench "$2" 2>&1 >/dev/null | sed -n 's/.*Collected : *\([0-9]*\).*/\1/p'
}
declare -A counted=()
if [[ "${RAYON_CALLGRIND:-0}" == 1 ]]; then
    command -v valgrind >/dev/null || { echo "RAYON_CALLGRIND=1 needs valgrind (apt-get install valgrind)" >&2; exit 1; }
    echo "counting instructions on one thread (callgrind)"
    for workload in "${workloads[@]}"; do
        for build in on-chase-lev on-crossbeam; do
            counted[$workload.$build]=$(instructions "$build" "$workload")
        done
    done
fi

median() { # median of the numbers on stdin
    sort -n | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

# The ratio of the two builds' times within each run (they ran one after
# the other), as "median low high runs": the median of those paired ratios and
# the distribution-free confidence interval of that median, between the
# order statistics k and runs - k + 1 with k = (runs - 1.96 sqrt(runs)) / 2
# (about 95%; the sign test's interval). An interval that holds 1.00 means
# the runs cannot tell the builds apart.
paired() { # paired <workload> <build> <baseline build>
    awk -v w="$1" -v mine="$2" -v theirs="$3" '
        $1 == w && $2 == mine {a[$4] = $3}
        $1 == w && $2 == theirs {b[$4] = $3}
        END {for (r in a) if (r in b) print a[r] / b[r]}' "$samples" |
        sort -g |
        awk '{v[NR] = $1}
             END {
                 n = NR; k = int((n - 1.96 * sqrt(n)) / 2); if (k < 1) k = 1
                 m = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
                 printf "%.4f %.4f %.4f %d\n", m, v[k], v[n - k + 1], n
             }'
}

echo
echo "rayon $(awk -F'"' '/^name = "rayon"$/ {getline; print $2}' tests/drop-in/Cargo.lock) on $(nproc) CPUs; median of $runs runs each (ms, in-process timing of the parallel part)"
echo
if ((${#builds[@]} == 3)); then
    echo "| workload | rayon on chase-lev | rayon on crossbeam-deque | chase-lev/crossbeam | paired, median [95% CI] | instructions, 1 thread | without the pop fence (incorrect) | its ratio to crossbeam |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|"
else
    echo "| workload | rayon on chase-lev | rayon on crossbeam-deque | chase-lev/crossbeam | paired, median [95% CI] | instructions, 1 thread |"
    echo "|---|---:|---:|---:|---:|---:|"
fi
tsv="$target_dir/rayon-on-chase-lev.tsv"
{
    echo "# $runs alternating runs per build, $(nproc) CPUs, RUSTFLAGS=\"$RUSTFLAGS\", at $(git rev-parse --short HEAD 2>/dev/null || echo 'an unknown commit')$(git diff --quiet HEAD -- deque tests/drop-in 2>/dev/null || echo ' with uncommitted changes')"
    printf 'workload\tdescription\ton_chase_lev_ms\ton_crossbeam_ms\tpaired_ratio\tci_low\tci_high\tinstructions_on_chase_lev\tinstructions_on_crossbeam\truns\n'
} >"$tsv.partial"
for workload in "${workloads[@]}"; do
    mine=$(awk -v w="$workload" '$1 == w && $2 == "on-chase-lev" {print $3}' "$samples" | median)
    theirs=$(awk -v w="$workload" '$1 == w && $2 == "on-crossbeam" {print $3}' "$samples" | median)
    read -r ratio low high paired_runs < <(paired "$workload" on-chase-lev on-crossbeam)
    ours_counted="${counted[$workload.on-chase-lev]:--}"
    theirs_counted="${counted[$workload.on-crossbeam]:--}"
    awk -v w="$workload" -v name="$(describe "$workload")" -v a="$mine" -v b="$theirs" \
        -v r="$ratio" -v l="$low" -v h="$high" -v i="$ours_counted" -v j="$theirs_counted" -v n="$paired_runs" \
        'BEGIN {printf "%s\t%s\t%.3f\t%.3f\t%s\t%s\t%s\t%s\t%s\t%s\n", w, name, a / 1e6, b / 1e6, r, l, h, i, j, n}' >>"$tsv.partial"
    row=$(awk -v name="$(describe "$workload")" -v a="$mine" -v b="$theirs" \
        -v r="$ratio" -v l="$low" -v h="$high" -v i="$ours_counted" -v j="$theirs_counted" \
        'BEGIN {
             printf "| %s | %.1f | %.1f | %.2f | %.3f [%.3f, %.3f] |", name, a / 1e6, b / 1e6, a / b, r, l, h
             if (i == "-") printf " - |"; else printf " %.1fM / %.1fM (%.4f) |", i / 1e6, j / 1e6, i / j
         }')
    if ((${#builds[@]} == 3)); then
        unfenced=$(awk -v w="$workload" '$1 == w && $2 == "without-pop-fence" {print $3}' "$samples" | median)
        row+=$(awk -v c="$unfenced" -v b="$theirs" 'BEGIN {printf " %.1f | %.2f |", c / 1e6, c / b}')
    fi
    echo "$row"
done
mv "$tsv.partial" "$tsv"
echo
echo "(written to $tsv, for the compare bench's targets table; the paired column: the"
echo "median of the two builds' ratios run by run, and its interval: one that holds 1.00"
echo "means these runs cannot tell the builds apart, as the control row shows for identical code)"
