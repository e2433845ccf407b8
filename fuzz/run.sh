#!/usr/bin/env bash
# Runs every fuzz target for FUZZ_SECONDS seconds (default 60) with the nightly
# toolchain, installing cargo-fuzz first if it is missing. Used by CI.
#
#   fuzz/run.sh                                  # ops, then schedule, 60 s each
#   FUZZ_SECONDS=3600 FUZZ_TARGETS=ops fuzz/run.sh
#
# Each target starts from fuzz/corpus/<target>/ (the committed seed-* files,
# plus whatever this machine gathered before; the rest is gitignored), with
# the options of fuzz/options.sh. Prints libFuzzer's final line per target
# (`cov:` is the coverage, `exec/s` the speed); the full log is kept in
# fuzz/target/<target>.log. Exits non-zero on the first crash, after printing
# the end of the log; the crashing input is in fuzz/artifacts/<target>/.
set -euo pipefail

fuzz_dir=$(cd "$(dirname "$0")" && pwd)
seconds=${FUZZ_SECONDS:-60}
toolchain=${FUZZ_TOOLCHAIN:-nightly}
targets=${FUZZ_TARGETS:-ops schedule}
cd "$fuzz_dir"
# shellcheck source=options.sh
. "$fuzz_dir/options.sh"

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "installing cargo-fuzz"
  cargo install cargo-fuzz --locked
fi

for target in $targets; do
  cargo "+$toolchain" fuzz build "$target"
done
mkdir -p target
for target in $targets; do
  fuzz_options "$target"
  log="$fuzz_dir/target/$target.log"
  if cargo "+$toolchain" fuzz run "$target" -- -max_total_time="$seconds" "${options[@]}" >"$log" 2>&1; then
    final=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1)
    echo "fuzz $target: no crash in $seconds s: $final"
  else
    echo "fuzz $target: CRASH (full log: $log)"
    tail -n 80 "$log"
    exit 1
  fi
done
