#!/usr/bin/env bash
# Miri's column of the mutation matrix: runs tests/miri_mutants.rs under miri
# once per seed and writes model-tests/miri-results.tsv (mutant, seeds on
# which miri's run caught it, seeds run, first violation seen), which
# `cargo run --release -p model-tests --bin mutation-matrix` reads.
#
# Budget: MIRI_SEEDS (default 8) seeds, MIRI_REPETITIONS (default 2)
# repetitions of each shape per seed; about 20 s per seed here.
# Flags: weak-memory emulation stays on (miri's default). Tree borrows,
# because crossbeam-epoch 0.9 trips stacked borrows inside its own code;
# leaks ignored, because one mutant (no-reload-after-grow) leaks its old
# buffer by design (the correct deque's leaks are checked by
# `cargo +nightly miri test -p chase-lev` and by the loom suite).
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${MIRI_SEEDS:-8}
rustup component list --toolchain nightly --installed | grep -q '^miri' ||
    rustup component add miri rust-src --toolchain nightly
output=model-tests/miri-results.tsv
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
flags="-Zmiri-ignore-leaks -Zmiri-tree-borrows -Zmiri-permissive-provenance"
for seed in $(seq 0 $((seeds - 1))); do
    echo "miri seed $seed of $seeds"
    MIRIFLAGS="$flags -Zmiri-seed=$seed" cargo +nightly miri test -q -p model-tests --test miri_mutants \
        >"$scratch/seed-$seed.txt"
    grep -q '^miri-mutant correct kept' "$scratch/seed-$seed.txt" || {
        echo "the correct deque did not pass under miri (seed $seed)" >&2
        exit 1
    }
done
{
    echo "# miri $(cargo +nightly miri --version 2>/dev/null | head -1); MIRIFLAGS=\"$flags -Zmiri-seed=<0..$((seeds - 1))>\""
    printf 'mutant\tseeds_caught\tseeds_run\tfirst_violation\n'
    for mutant in $(grep -h '^miri-mutant' "$scratch"/seed-0.txt | awk '$2 != "correct" { print $2 }'); do
        caught=$(grep -h "^miri-mutant $mutant caught" "$scratch"/seed-*.txt | wc -l)
        first=$(grep -h "^miri-mutant $mutant caught" "$scratch"/seed-*.txt | head -1 | cut -d' ' -f4-)
        printf '%s\t%s\t%s\t%s\n' "$mutant" "$caught" "$seeds" "${first:--}"
    done
} >"$output"
echo "written to $output"
cat "$output"
