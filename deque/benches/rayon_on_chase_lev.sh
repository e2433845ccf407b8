#!/usr/bin/env bash
# rayon on chase-lev against rayon on crossbeam-deque: the same program
# (tests/drop-in/rayon-on-chase-lev), the same rayon and rayon-core (from
# tests/drop-in/Cargo.lock), built twice: once through the workspace's
# `[patch.crates-io]` (crossbeam-deque = chase-lev), once from a copy of the
# workspace without the patch (crossbeam-deque from crates.io). Then runs of
# the two binaries alternate (which one goes first alternates too), each run
# one process timing one workload's parallel part in-process, and the table
# gives each build's median and the ratio of the medians.
#
# Usage: deque/benches/rayon_on_chase_lev.sh [runs]   (default 11 per build
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
# moves the two binaries less: the control row, the same serial code in both,
# drifted up to 1.13x without it. Set RUSTFLAGS to build otherwise.
#
# The medians also go to $CARGO_TARGET_DIR/rayon-on-chase-lev.tsv (default:
# target/), which the compare bench's targets table reads for its rayon rows.
set -euo pipefail

cd "$(dirname "$0")/../.."
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
# The workspace manifest minus the [patch.crates-io] table and the drop-in
# member; the lock keeps rayon's versions, crossbeam-deque resolves anew.
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
    mkdir -p "$bound/deque" "$bound/tests/drop-in"
    cp -r deque/Cargo.toml deque/src deque/tests "$bound/deque/"
    cp -r tests/drop-in/Cargo.toml tests/drop-in/Cargo.lock tests/drop-in/crossbeam-deque \
        tests/drop-in/rayon-on-chase-lev "$bound/tests/drop-in/"
    rm -rf "$bound/tests/drop-in/rayon-on-chase-lev/target"
    # A workspace of the deque alone, for its inherited settings.
    awk '/^members = \[/ {print "members = [\"deque\"]"; skip = 1; next}
         skip && /^\]/ {skip = 0; next}
         skip || /^exclude = / {next}
         {print}' Cargo.toml >"$bound/Cargo.toml"
    fence='fence_if(choose!(policy, TakeFence, Some(SeqCst), None));'
    grep -qF "$fence" "$bound/deque/src/deque.rs" || {
        echo "the pop's fence line is not in deque/src/deque.rs any more: update this script" >&2
        exit 1
    }
    # The line has no character that a basic regular expression treats specially.
    sed -i "s/$fence/fence_if(None);/" "$bound/deque/src/deque.rs"
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
            echo "$workload $build $nanoseconds" >>"$samples"
        done
    done
done

median() { # median of the numbers on stdin
    sort -n | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

echo
echo "rayon $(awk -F'"' '/^name = "rayon"$/ {getline; print $2}' tests/drop-in/Cargo.lock) on $(nproc) CPUs; median of $runs runs each (ms, in-process timing of the parallel part)"
echo
if ((${#builds[@]} == 3)); then
    echo "| workload | rayon on chase-lev | rayon on crossbeam-deque | chase-lev/crossbeam | without the pop fence (incorrect) | its ratio to crossbeam |"
    echo "|---|---:|---:|---:|---:|---:|"
else
    echo "| workload | rayon on chase-lev | rayon on crossbeam-deque | chase-lev/crossbeam |"
    echo "|---|---:|---:|---:|"
fi
tsv="$target_dir/rayon-on-chase-lev.tsv"
{
    echo "# $runs alternating runs per build, $(nproc) CPUs, RUSTFLAGS=\"$RUSTFLAGS\", at $(git rev-parse --short HEAD 2>/dev/null || echo 'an unknown commit')$(git diff --quiet HEAD -- deque tests/drop-in 2>/dev/null || echo ' with uncommitted changes')"
    printf 'workload\tdescription\ton_chase_lev_ms\ton_crossbeam_ms\n'
} >"$tsv.partial"
for workload in "${workloads[@]}"; do
    mine=$(awk -v w="$workload" '$1 == w && $2 == "on-chase-lev" {print $3}' "$samples" | median)
    theirs=$(awk -v w="$workload" '$1 == w && $2 == "on-crossbeam" {print $3}' "$samples" | median)
    awk -v w="$workload" -v name="$(describe "$workload")" -v a="$mine" -v b="$theirs" \
        'BEGIN {printf "%s\t%s\t%.3f\t%.3f\n", w, name, a / 1e6, b / 1e6}' >>"$tsv.partial"
    row=$(awk -v name="$(describe "$workload")" -v a="$mine" -v b="$theirs" \
        'BEGIN {printf "| %s | %.1f | %.1f | %.2f |", name, a / 1e6, b / 1e6, a / b}')
    if ((${#builds[@]} == 3)); then
        unfenced=$(awk -v w="$workload" '$1 == w && $2 == "without-pop-fence" {print $3}' "$samples" | median)
        row+=$(awk -v c="$unfenced" -v b="$theirs" 'BEGIN {printf " %.1f | %.2f |", c / 1e6, c / b}')
    fi
    echo "$row"
done
mv "$tsv.partial" "$tsv"
echo
echo "(medians written to $tsv, for the compare bench's targets table)"
