#!/usr/bin/env bash
# Shows that the `ops` target finds a planted bug within the CI budget.
#
# The bugs are mutants of the one table, model-tests/mutants.md (the records
# `planted for: the fuzz ops target`), applied to the deque's own
# source by the mutant build: `ops` is built once with `--features
# planted-bug`, which makes it drive that build, and each run names its bug
# in CHASE_LEV_MUTANT. For each bug named on the command line (default: all
# of them), this fuzzes with the options CI uses (fuzz/options.sh) and
# reports how long libFuzzer took to crash. A bug that is not found within
# PLANTED_BUG_SECONDS (default 60, the CI budget of one target) fails the
# script.
#
# PLANTED_BUG_START=empty (the default) starts from an empty corpus, which
# shows what the fuzzer finds on its own; PLANTED_BUG_START=seeds starts from
# the committed seeds, as CI does (some seeds shrink a buffer holding tasks,
# so the shrink bug is then found at once).
#
#   fuzz/planted-bug.sh                      # every bug
#   fuzz/planted-bug.sh shrink-drops-newest  # one bug
#
# The build goes to fuzz/target/planted-bug (gitignored), never to the real
# fuzz build.
set -euo pipefail

fuzz_dir=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$fuzz_dir/.." && pwd)
budget=${PLANTED_BUG_SECONDS:-60}
start_from=${PLANTED_BUG_START:-empty}
toolchain=${FUZZ_TOOLCHAIN:-nightly}

# The planted bugs: the table's records planted for this target.
mapfile -t bugs < <(awk '/^## /{name=$2} /^planted for: the fuzz ops target/{print name}' "$root/model-tests/mutants.md")
if [ ${#bugs[@]} -eq 0 ]; then
  echo "no record of model-tests/mutants.md is planted for the fuzz ops target" >&2
  exit 2
fi

if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked
fi

selected=("$@")
if [ ${#selected[@]} -eq 0 ]; then
  selected=("${bugs[@]}")
fi

# shellcheck source=options.sh
. "$fuzz_dir/options.sh"
fuzz_options ops
scratch=$(mktemp -d /tmp/chase-lev-planted-bug.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
(cd "$fuzz_dir" && cargo "+$toolchain" fuzz build ops --features planted-bug --target-dir "$fuzz_dir/target/planted-bug" >"$scratch/build.log" 2>&1) || {
  cat "$scratch/build.log" >&2
  exit 2
}
failures=0
for name in "${selected[@]}"; do
  if ! printf '%s\n' "${bugs[@]}" | grep -qx "$name"; then
    echo "unknown planted bug: $name (planted for ops: ${bugs[*]})" >&2
    exit 2
  fi
  description=$(awk -v want="## $name" '$0 == want {found=1; next} found && /^change: /{sub(/^change: /, ""); print; exit}' "$root/model-tests/mutants.md")
  echo "== planted bug $name: $description"
  corpus="$scratch/$name-corpus"
  artifacts="$scratch/$name-artifacts/"
  mkdir -p "$corpus" "$artifacts"
  if [ "$start_from" = seeds ]; then
    cp "$fuzz_dir"/corpus/ops/seed-* "$corpus"/
  fi
  log="$scratch/$name-fuzz.log"
  start=$(date +%s%N)
  set +e
  (cd "$fuzz_dir" && CHASE_LEV_MUTANT="$name" cargo "+$toolchain" fuzz run ops --features planted-bug --target-dir "$fuzz_dir/target/planted-bug" "$corpus" -- \
    -max_total_time="$budget" -artifact_prefix="$artifacts" "${options[@]}" >"$log" 2>&1)
  status=$?
  set -e
  end=$(date +%s%N)
  tenths=$(((end - start) / 100000000))
  crash=$(ls "$artifacts" 2>/dev/null | head -n 1)
  if [ "$status" -ne 0 ] && [ -n "$crash" ]; then
    runs=$(grep -o '^#[0-9]*' "$log" | tail -n 1 || true)
    runs=${runs:-#0}
    printf 'found %s after %d.%d s (%s runs; budget %s s, started from %s corpus)\n' \
      "$name" $((tenths / 10)) $((tenths % 10)) "${runs#\#}" "$budget" "$start_from"
    grep -m 1 -A 1 'panicked at' "$log" || grep -m 1 'ERROR: AddressSanitizer' "$log" || true
  else
    echo "NOT FOUND: $name within $budget s (fuzzer exit status $status)"
    tail -n 5 "$log"
    failures=$((failures + 1))
  fi
done
if [ "$failures" -ne 0 ]; then
  echo "$failures planted bug(s) not found" >&2
  exit 1
fi
