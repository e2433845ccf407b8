#!/usr/bin/env bash
# Miri's column of the mutation matrix: runs tests/miri_mutants.rs under miri
# once per seed and writes model-tests/miri-results.tsv (mutant, seeds on
# which miri's run caught it, seeds run, first violation seen), which
# `cargo run --release -p model-tests --bin mutation-matrix` reads.
#
# Budget: MIRI_SEEDS (default 10) seeds, MIRI_REPETITIONS (default 8)
# repetitions of each shape per seed; about 40 s per seed here. With 2
# repetitions (4x faster) miri missed the steal-fence mutant on all of 10
# seeds; with 10 it caught it on 4 of them.
# Flags: miri's defaults (Stacked Borrows, weak-memory emulation), except
# that leaks are ignored, because one mutant (no-reload-after-grow) leaks its
# old buffer by design (the correct deque's leaks are checked by
# `cargo +nightly miri test -p chase-lev` and by the loom suite).
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${MIRI_SEEDS:-10}
export MIRI_REPETITIONS=${MIRI_REPETITIONS:-8}
rustup component list --toolchain nightly --installed | grep -q '^miri' ||
    rustup component add miri rust-src --toolchain nightly
output=model-tests/miri-results.tsv
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# The mutants' names, in the order the test runs them (from the matrix's own list).
names=$(sed -n 's/^## \([a-z-]*\)$/\1/p' model-tests/mutants.md)
[ -n "$names" ] || { echo "could not read the mutant names from model-tests/mutants.md" >&2; exit 1; }
# The injector's mutants are left out: tests/miri_mutants.rs has no injector
# shape, so miri would not run their code (the matrix shows them "not run").
names=$(echo "$names" | grep -v '^injector-')
# The mutants still to run go to the test as an argument; the resume after
# a catch relies on it (when it did not arrive, every mutant ran again from
# the first, and each later one was credited with the same catch). The test
# prints the selection it received. MIRI_REPETITIONS must be forwarded
# through miri's isolation.
flags="-Zmiri-ignore-leaks"
flags="$flags -Zmiri-env-forward=MIRI_REPETITIONS"
for seed in $(seq 0 $((seeds - 1))); do
    echo "miri seed $seed of $seeds"
    out="$scratch/seed-$seed.txt"
    : >"$out"
    remaining=""
    while :; do
        status=0
        MIRIFLAGS="$flags -Zmiri-seed=$seed" \
            cargo +nightly miri test -q -p model-tests --test miri_mutants -- "$remaining" \
            >"$scratch/run.txt" 2>"$scratch/error.txt" || status=$?
        grep '^miri-mutant' "$scratch/run.txt" | grep -v -e '^miri-mutant correct' -e '^miri-mutant selection' >>"$out" || true
        grep -q '^miri-mutant correct kept' "$scratch/run.txt" || {
            echo "the correct deque did not pass under miri (seed $seed):" >&2
            tail -30 "$scratch/error.txt" >&2
            exit 1
        }
        [ "$status" -eq 0 ] && break
        # Miri stopped on undefined behaviour in the mutant after the last
        # one reported: that is a catch. Resume with the ones after it.
        done_names=$(awk '{ print $2 }' "$out")
        pending=$(printf '%s\n' $names | grep -vxF -f <(printf '%s\n' $done_names) || true)
        culprit=$(printf '%s\n' $pending | head -1)
        reason=$(grep -m1 '^error: ' "$scratch/error.txt" | cut -c8-80 || true)
        echo "miri-mutant $culprit caught undefined behaviour: ${reason:-miri stopped}" >>"$out"
        remaining=$(printf '%s\n' $pending | tail -n +2 | paste -sd, -)
        [ -n "$remaining" ] || break
    done
done
{
    echo "# miri $(cargo +nightly miri --version 2>/dev/null | head -1); MIRI_REPETITIONS=$MIRI_REPETITIONS; MIRIFLAGS=\"$flags -Zmiri-seed=<0..$((seeds - 1))>\"; run at commit $(git rev-parse --short HEAD); the injector's mutants are left out: tests/miri_mutants.rs has no injector shape"
    printf 'mutant\tseeds_caught\tseeds_run\tfirst_violation\n'
    for mutant in $names; do
        caught=$(cat "$scratch"/seed-*.txt | grep -c "^miri-mutant $mutant caught" || true)
        first=$(cat "$scratch"/seed-*.txt | grep -h "^miri-mutant $mutant caught" | head -1 | cut -d' ' -f4- || true)
        printf '%s\t%s\t%s\t%s\n' "$mutant" "$caught" "$seeds" "${first:--}"
    done
} >"$output"
echo "written to $output"
cat "$output"
