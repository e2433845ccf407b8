#!/usr/bin/env bash
# Instructions per operation of the owner paths (and of an uncontended steal)
# for chase-lev, st3, crossbeam-deque and Vec, counted by callgrind: unlike
# wall-clock time these counts do not move when other jobs share the machine.
#
# Usage: deque/benches/callgrind.sh [case ...]
#   cases: push-1k-then-pop-1k push-1M-then-pop-1M push-pop-pairs steal-1k steal-empty
# Uses $CARGO_TARGET_DIR (default: target/ of the workspace).
set -euo pipefail

cd "$(dirname "$0")/../.."
target_dir="${CARGO_TARGET_DIR:-target}"
command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }

# The bench profile: optimised, with the symbols callgrind needs.
cargo build --quiet --profile bench -p chase-lev --example owner_paths
binary="$target_dir/release/examples/owner_paths"

cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(push-1k-then-pop-1k push-1M-then-pop-1M push-pop-pairs steal-1k steal-empty)
deques=(chase-lev st3 crossbeam-deque Vec)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Instructions counted inside measured_rounds / measured_steal_rounds only.
count() {
    local deque="$1" case="$2" out="$work/callgrind.$1.$2"
    local operations
    operations=$(valgrind --tool=callgrind --callgrind-out-file="$out" \
        --collect-atstart=no --toggle-collect='*measured_*rounds*' \
        "$binary" "$deque" "$case" 2>/dev/null | sed -n 's/^operations //p')
    local instructions
    instructions=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$out")
    [ -n "$instructions" ] || instructions=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$out")
    awk -v i="$instructions" -v o="$operations" 'BEGIN { printf "%.1f", i / o }'
}

printf '| %-21s |' "instructions / op"
for deque in "${deques[@]}"; do printf ' %15s |' "$deque"; done
printf ' %13s | %19s |\n' "chase-lev/st3" "chase-lev/crossbeam"
printf '|%s|' "-----------------------"
for _ in "${deques[@]}"; do printf '%s|' "----------------:"; done
printf '%s|%s|\n' "--------------:" "--------------------:"
for case in "${cases[@]}"; do
    declare -A per_op=()
    printf '| %-21s |' "$case"
    for deque in "${deques[@]}"; do
        if [ "$deque" = Vec ] && [[ "$case" = steal-* ]]; then
            per_op[$deque]="-"
        else
            per_op[$deque]=$(count "$deque" "$case")
        fi
        printf ' %15s |' "${per_op[$deque]}"
    done
    awk -v c="${per_op[chase-lev]}" -v s="${per_op[st3]}" -v x="${per_op[crossbeam-deque]}" \
        'BEGIN { printf " %13.2f | %19.2f |\n", c / s, c / x }'
    unset per_op
done
