#!/usr/bin/env bash
# Shows that the `ops` target finds a planted bug within the CI budget.
#
# For each bug named on the command line (default: all of them), this copies
# the last commit (HEAD, so that uncommitted work in the tree does not get in
# the way) to a temporary directory, plants the bug in the copy's deque/src
# with sed (the real deque is never touched), builds the `ops` target there,
# fuzzes it with the options CI uses (fuzz/options.sh), and reports how long
# libFuzzer took to crash. A bug that is not found within PLANTED_BUG_SECONDS
# (default 60, the CI budget of one target) fails the script.
#
# PLANTED_BUG_START=empty (the default) starts from an empty corpus, which
# shows what the fuzzer finds on its own; PLANTED_BUG_START=seeds starts from
# the committed seeds, as CI does (some seeds shrink a buffer holding tasks,
# so the shrink bug is then found at once).
#
#   fuzz/planted-bug.sh                      # every bug
#   fuzz/planted-bug.sh shrink-drops-newest  # one bug
#
# Builds go to fuzz/target/planted-bug (gitignored, kept between runs so that
# only the deque and the harness are rebuilt), never to the real fuzz build.
set -euo pipefail

fuzz_dir=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$fuzz_dir/.." && pwd)
budget=${PLANTED_BUG_SECONDS:-60}
start_from=${PLANTED_BUG_START:-empty}
toolchain=${FUZZ_TOOLCHAIN:-nightly}

# name | file under deque/src | sed script | what the bug is
bugs=(
  "shrink-drops-newest|shrink.rs|/fn shrink(/,/^    }/ s/self.replace_buffer(bottom, top, new_capacity)/self.replace_buffer(bottom - 1, top, new_capacity)/|shrink copies one task too few (the newest is lost)"
  "batch-limit-ignored|batch.rs|s/let wanted = len.div_ceil(2).min(limit)/let wanted = len.div_ceil(2)/|a batch steal ignores its limit"
  "bound-off-by-one|deque.rs|s/if bottom - top >= self.limit.get() {/if bottom - top > self.limit.get() {/|push lets one task more than the limit in"
)

if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked
fi

selected=("$@")
if [ ${#selected[@]} -eq 0 ]; then
  for bug in "${bugs[@]}"; do selected+=("${bug%%|*}"); done
fi

# shellcheck source=options.sh
. "$fuzz_dir/options.sh"
fuzz_options ops
scratch=$(mktemp -d /tmp/chase-lev-planted-bug.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
failures=0
for name in "${selected[@]}"; do
  entry=""
  for bug in "${bugs[@]}"; do
    if [ "${bug%%|*}" = "$name" ]; then entry=$bug; fi
  done
  if [ -z "$entry" ]; then
    echo "unknown planted bug: $name" >&2
    exit 2
  fi
  IFS='|' read -r _ file script description <<<"$entry"

  copy="$scratch/$name"
  mkdir -p "$copy"
  git -C "$root" archive HEAD | tar -C "$copy" -xf -
  target="$copy/deque/src/$file"
  cp "$target" "$scratch/$name.orig"
  sed -i "$script" "$target"
  if cmp -s "$target" "$scratch/$name.orig"; then
    echo "planting $name changed nothing: the deque's source moved on, update the sed script" >&2
    exit 2
  fi
  echo "== planted bug $name: $description"
  diff "$scratch/$name.orig" "$target" | grep '^[<>]' || true

  corpus="$scratch/$name-corpus"
  artifacts="$scratch/$name-artifacts/"
  mkdir -p "$corpus" "$artifacts"
  if [ "$start_from" = seeds ]; then
    cp "$fuzz_dir"/corpus/ops/seed-* "$corpus"/
  fi
  (cd "$copy/fuzz" && cargo "+$toolchain" fuzz build ops --target-dir "$fuzz_dir/target/planted-bug" >"$scratch/$name-build.log" 2>&1) || {
    cat "$scratch/$name-build.log" >&2
    exit 2
  }
  log="$scratch/$name-fuzz.log"
  start=$(date +%s%N)
  set +e
  (cd "$copy/fuzz" && cargo "+$toolchain" fuzz run ops --target-dir "$fuzz_dir/target/planted-bug" "$corpus" -- \
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
