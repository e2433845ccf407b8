#!/usr/bin/env bash
# Instructions per operation of the owner paths (and of an uncontended steal)
# for chase-lev, st3, crossbeam-deque and Vec, counted by callgrind: unlike
# wall-clock time these counts do not move when other jobs share the machine.
# A second table counts the locked instructions (a `lock` prefix, `xchg` with
# memory, `mfence`: x86's barriers) per operation, from the same profiles
# (benches/locked_instructions.py). Both go to
# $target_dir/callgrind-owner-paths.tsv, which the compare bench's targets
# table reads.
#
# Usage: benches/callgrind.sh [case ...]
#   cases: push-1k-then-pop-1k push-1M-then-pop-1M push-pop-pairs pop-empty steal-1k steal-empty
#          steal-batch-1k (push 1k, then steal_batch_and_pop into a LIFO worker popped empty)
#          injector-push-then-steal injector-push-then-steal-batch (the Injector's
#          uncontended paths, examples/injector_paths.rs: chase-lev and crossbeam-deque only)
# Uses $CARGO_TARGET_DIR (default: target/ of the workspace).
set -euo pipefail

cd "$(dirname "$0")/.."
target_dir="${CARGO_TARGET_DIR:-target}"
command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }

# The bench profile: optimised, with the symbols callgrind needs.
cargo build --quiet --profile bench -p chase-lev-bench --example owner_paths --example injector_paths
binary_of() {
    case "$1" in
        injector-*) echo "$target_dir/release/examples/injector_paths" ;;
        *) echo "$target_dir/release/examples/owner_paths" ;;
    esac
}

cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(push-1k-then-pop-1k push-1M-then-pop-1M push-pop-pairs pop-empty steal-1k steal-empty steal-batch-1k
    injector-push-then-steal injector-push-then-steal-batch)
deques=(chase-lev st3 crossbeam-deque Vec)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Instructions counted inside measured_rounds / measured_steal_rounds only;
# prints "instructions-per-op locked-per-op".
count() {
    local deque="$1" case="$2" out="$work/callgrind.$1.$2"
    local binary operations
    binary=$(binary_of "$case")
    operations=$(valgrind --tool=callgrind --callgrind-out-file="$out" \
        --dump-instr=yes --dump-line=no \
        --collect-atstart=no --toggle-collect='*measured_*rounds*' \
        "$binary" "$deque" "$case" 2>/dev/null | sed -n 's/^operations //p')
    local instructions
    instructions=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$out")
    [ -n "$instructions" ] || instructions=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$out")
    local locked
    locked=$(python3 benches/locked_instructions.py "$out" "$binary")
    awk -v i="$instructions" -v l="$locked" -v o="$operations" 'BEGIN { printf "%.1f %.2f\n", i / o, l / o }'
}

tsv="$target_dir/callgrind-owner-paths.tsv"
printf 'case\tdeque\tinstructions_per_op\tlocked_per_op\n' > "$tsv.partial"
declare -A instructions_of=() locked_of=()
for case in "${cases[@]}"; do
    for deque in "${deques[@]}"; do
        if { [ "$deque" = Vec ] && [[ "$case" = steal-* ]]; } ||
            { [[ "$case" = injector-* ]] && [[ "$deque" = Vec || "$deque" = st3 ]]; }; then
            instructions_of[$deque.$case]="-"
            locked_of[$deque.$case]="-"
        else
            read -r instructions_of[$deque.$case] locked_of[$deque.$case] < <(count "$deque" "$case")
        fi
        printf '%s\t%s\t%s\t%s\n' "$case" "$deque" "${instructions_of[$deque.$case]}" "${locked_of[$deque.$case]}" >> "$tsv.partial"
    done
done
mv "$tsv.partial" "$tsv"

table() {
    local title="$1" format="$2"
    local -n figures="$3"
    printf '| %-30s |' "$title"
    for deque in "${deques[@]}"; do printf ' %15s |' "$deque"; done
    printf ' %13s | %19s |\n' "chase-lev/st3" "chase-lev/crossbeam"
    printf '|%s|' "--------------------------------"
    for _ in "${deques[@]}"; do printf '%s|' "----------------:"; done
    printf '%s|%s|\n' "--------------:" "--------------------:"
    for case in "${cases[@]}"; do
        printf '| %-30s |' "$case"
        for deque in "${deques[@]}"; do printf ' %15s |' "${figures[$deque.$case]}"; done
        awk -v c="${figures[chase-lev.$case]}" -v s="${figures[st3.$case]}" -v x="${figures[crossbeam-deque.$case]}" \
            'function r(a, b) { if (a == "-" || b == "-") return "-"; return (b + 0 == 0) ? ((a + 0 == 0) ? "-" : "inf") : sprintf("%.2f", a / b) }
             BEGIN { printf " %13s | %19s |\n", r(c, s), r(c, x) }'
    done
}
table "instructions / op" "%.1f" instructions_of
echo
table "locked instr. / op" "%.2f" locked_of
echo
echo "(written to $tsv)"
