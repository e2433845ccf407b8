#!/usr/bin/env bash
# The hazard slots (reclamation.rs) against the crossbeam-epoch reclamation
# they replaced, two checkouts side by side (proofs-notes/reclamation.md#cost).
#
# Usage: benches/reclamation_cost.sh <wall|stress|owner> OLD NEW
#   OLD, NEW: two checkouts of this repository (e.g. `git worktree add
#   ../old-epoch d2b7111`); each is built in its own target/.
#   wall    runs `cargo bench -p chase-lev-bench --bench compare -- steal` in OLD and
#           NEW alternately, $REPS times each (default 5), and prints the
#           median, min and max over the runs of chase-lev's figures: the
#           interleaved minimum of the same-thread steal rows and criterion's
#           medians of the steal groups.
#   stress  runs examples/reclamation_stress.rs (copied into OLD if it is
#           missing there: it uses only the public API) under
#           `/usr/bin/time -v`, for 1, 4, 16 and 64 thieves ($THIEVES), OLD
#           and NEW alternately, $REPS times each (default 3), with $OPS owner
#           operations (default 2000000), then once more each with a stalled
#           thief ($STALL_OPS operations, default $OPS, for 1 and 16 thieves),
#           then $IDLE_REPS times (default 5) with 0 and $THIEVES registered
#           thieves asleep (`idle`); prints medians. $PARTS (default
#           "steady stall idle") selects parts; PARTS=none only re-reads $OUT.
#   owner   counts with callgrind the instructions of the owner's workload of
#           reclamation_stress (its `run_owner`), $OPS owner operations
#           (default 100000), with 0, 1, 4, 16 and 64 registered thieves that
#           stole once and then sleep (`idle`): the cost of the buffer changes
#           against the number of threads (the hazard scan reads every
#           thread's slot; the epoch's collection walks every participant).
# Raw outputs are kept in $OUT (default: a new directory under /tmp).
# Callgrind's exact counts: run `bash benches/callgrind.sh` in each
# checkout.
set -euo pipefail

mode="${1:?usage: reclamation_cost.sh <wall|stress> OLD NEW}"
old="$(cd "${2:?OLD checkout}" && pwd)"
new="$(cd "${3:?NEW checkout}" && pwd)"
out="${OUT:-$(mktemp -d /tmp/reclamation_cost.XXXXXX)}"
mkdir -p "$out"
here="$(cd "$(dirname "$0")/.." && pwd)"
echo "raw outputs in $out; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

example="deque/examples/reclamation_stress.rs"
build_stress() {
    [ -e "$old/$example" ] || cp "$here/$example" "$old/$example"
    for dir in "$old" "$new"; do
        (cd "$dir" && cargo build --quiet --profile bench -p chase-lev --example reclamation_stress)
    done
}

case "$mode" in
owner)
    command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
    ops="${OPS:-100000}"
    build_stress
    for n in ${THIEVES:-0 1 4 16 64}; do
        for side in old new; do
            dir="$old"; [ "$side" = new ] && dir="$new"
            valgrind --tool=callgrind --callgrind-out-file="$out/owner.$side.$n.callgrind" \
                --collect-atstart=no --toggle-collect='*run_owner*' \
                "$dir/target/release/examples/reclamation_stress" "$n" "$ops" idle \
                >"$out/owner.$side.$n.txt" 2>/dev/null
        done
    done
    python3 - "$out" <<'EOF'
import glob, re, sys
out = sys.argv[1]
runs = {}
for path in glob.glob(f"{out}/owner.*.txt"):
    _, side, n, _ = path.rsplit("/", 1)[1].split(".")
    fields = dict(re.findall(r"(\w+)=(\S+)", open(path).read()))
    totals = re.search(r"^totals: *(\d+)", open(path[:-4] + ".callgrind").read(), re.M)
    runs[(side, int(n))] = (int(totals.group(1)), int(fields["owner_ops"]),
                            int(fields["buffer_changes"]))
print("| registered thieves | instructions / owner op, epoch (old) | hazard slots (new) "
      "| extra per buffer change vs 0 thieves, old | new |")
print("|--:|--:|--:|--:|--:|")
for n in sorted({n for _, n in runs}):
    cells = [f"{runs[(side, n)][0] / runs[(side, n)][1]:.1f}" for side in ("old", "new")]
    for side in ("old", "new"):
        (i, _, changes), (i0, _, _) = runs[(side, n)], runs[(side, 0)]
        cells.append(f"{(i - i0) / changes:.1f}")
    print(f"| {n} | " + " | ".join(cells) + " |")
print(f"(owner operations per run: {sorted({runs[k][1] for k in runs})}; "
      f"buffer changes per run: {sorted({runs[k][2] for k in runs})})")
EOF
    ;;
wall)
    reps="${REPS:-5}"
    for dir in "$old" "$new"; do
        (cd "$dir" && cargo bench --quiet -p chase-lev-bench --bench compare --no-run)
    done
    for rep in $(seq 1 "$reps"); do
        for side in old new; do
            dir="$old"; [ "$side" = new ] && dir="$new"
            (cd "$dir" && cargo bench --quiet -p chase-lev-bench --bench compare -- steal) \
                >"$out/wall.$side.$rep.txt" 2>&1
            echo "$side run $rep done, load $(cut -d' ' -f1-3 /proc/loadavg)" \
                | tee -a "$out/load.txt"
        done
    done
    python3 - "$out" "$reps" <<'EOF'
import re, statistics, sys
out, reps = sys.argv[1], int(sys.argv[2])
def rows(text, title):
    """chase-lev's column of the table that follows `title`."""
    found, inside = {}, False
    for line in text.splitlines():
        if line.startswith(title):
            inside = True
            continue
        if inside and line.startswith("|") and not line.startswith("|-"):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            if cells[0] == "benchmark":
                column = cells.index("chase-lev")
                continue
            if "steal" in cells[0] or "thieves" in cells[0]:
                try:
                    found[cells[0]] = float(cells[column])
                except ValueError:
                    pass
        elif inside and found and not line.startswith("|"):
            break
    return found
tables = {"Interleaved minimum": "interleaved minimum, ns per task",
          "Ratios from this run": "criterion median, ns per task"}
for title, label in tables.items():
    figures = {}
    for side in ("old", "new"):
        for rep in range(1, reps + 1):
            text = open(f"{out}/wall.{side}.{rep}.txt").read()
            for row, value in rows(text, title).items():
                figures.setdefault(row, {}).setdefault(side, []).append(value)
    print(f"\n{label} (median [min, max] of {reps} runs per commit):")
    print("| benchmark | epoch (old) | hazard slots (new) | new/old (medians) |")
    print("|---|--:|--:|--:|")
    for row, sides in figures.items():
        cell = lambda v: f"{statistics.median(v):.2f} [{min(v):.2f}, {max(v):.2f}]"
        if "old" in sides and "new" in sides:
            ratio = statistics.median(sides["new"]) / statistics.median(sides["old"])
            print(f"| {row} | {cell(sides['old'])} | {cell(sides['new'])} | {ratio:.2f} |")
EOF
    ;;
stress)
    reps="${REPS:-3}"
    ops="${OPS:-2000000}"
    stall_ops="${STALL_OPS:-$ops}"
    thieves="${THIEVES:-1 4 16 64}"
    example="deque/examples/reclamation_stress.rs"
    build_stress
    run() { # side rep thieves operations [stall]
        local dir="$old"; [ "$1" = new ] && dir="$new"
        local file="$out/stress.$1.$3.${5:-run}.$2.txt"
        /usr/bin/time -v "$dir/target/release/examples/reclamation_stress" "$3" "$4" ${5:-} \
            >"$file" 2>&1
        echo "load=$(cut -d' ' -f1 /proc/loadavg)" >>"$file"
    }
    parts=" ${PARTS:-steady stall idle} "
    if [[ "$parts" == *" steady "* ]]; then
        for rep in $(seq 1 "$reps"); do
            for n in $thieves; do
                for side in old new; do run "$side" "$rep" "$n" "$ops"; done
            done
            echo "round $rep done, load $(cut -d' ' -f1-3 /proc/loadavg)"
        done
    fi
    if [[ "$parts" == *" stall "* ]]; then
        for n in 1 16; do
            for side in old new; do run "$side" 1 "$n" "$stall_ops" stall; done
        done
    fi
    if [[ "$parts" == *" idle "* ]]; then
        for rep in $(seq 1 "${IDLE_REPS:-5}"); do
            for n in 0 $thieves; do
                for side in old new; do run "$side" "$rep" "$n" "$ops" idle; done
            done
        done
    fi
    python3 - "$out" <<'EOF'
import glob, re, statistics, sys
out = sys.argv[1]
runs = {}
for path in sorted(glob.glob(f"{out}/stress.*.txt")):
    _, side, thieves, kind, rep, _ = path.rsplit("/", 1)[1].split(".")
    text = open(path).read()
    fields = dict(re.findall(r"(\w+)=(\S+)", text.split("\n")[0]))
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    fields["peak_rss_kib"] = rss.group(1) if rss else "nan"
    fields["load"] = re.search(r"^load=(\S+)", text, re.M).group(1)
    runs.setdefault((kind, int(thieves), side), []).append(fields)
columns = [("owner_ops_per_s", "owner Mops/s", 1e-6), ("steals_per_s", "steals k/s", 1e-3),
           ("attempts_per_s", "steal attempts M/s", 1e-6),
           ("buffer_changes", "buffer changes", 1),
           ("max_retired_not_freed", "max retired, not freed", 1),
           ("peak_heap_bytes", "peak heap MiB", 1 / 2**20),
           ("peak_rss_kib", "peak RSS MiB", 1 / 1024), ("load", "load avg", 1)]
titles = {"run": "steady", "stall": "one thief stalled mid-steal",
          "idle": "thieves registered (one steal each), then asleep: the owner alone"}
for kind in ("run", "stall", "idle"):
    keys = sorted((k for k in runs if k[0] == kind), key=lambda k: (k[1], k[2] != "old"))
    if not keys:
        continue
    count = len(runs[keys[0]])
    print(f"\n{titles[kind]} "
          f"(median of {count} run(s); [min, max] when more than one):")
    print("| thieves | reclamation | " + " | ".join(c[1] for c in columns) + " |")
    print("|--:|---|" + "--:|" * len(columns))
    for key in keys:
        cells = []
        for field, _, scale in columns:
            values = [float(r[field]) * scale for r in runs[key]]
            digits = 0 if scale == 1 and field != "load" else 1 if field == "load" else 2
            text = f"{statistics.median(values):.{digits}f}"
            if len(values) > 1:
                text += f" [{min(values):.{digits}f}, {max(values):.{digits}f}]"
            cells.append(text)
        name = "epoch (old)" if key[2] == "old" else "hazard slots (new)"
        print(f"| {key[1]} | {name} | " + " | ".join(cells) + " |")
EOF
    ;;
*)
    echo "unknown mode $mode" >&2
    exit 1
    ;;
esac
