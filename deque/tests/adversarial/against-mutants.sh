#!/usr/bin/env bash
# Runs deque/tests/adversarial.rs, unchanged, against the mutant build
# (model-tests/builds/mutants), once with no mutant and once per mutant, and
# prints which of its tests fail. The suite uses only chase-lev's public API;
# here a wrapper crate named `chase_lev` gives it that API over the mutant
# build, each worker built with `Worker::new_mutant(.., Some(mutant))` for the
# mutant named by ADVERSARIAL_MUTANT. Nothing is written inside the
# repository (the wrapper and its target live in a temporary directory).
#
#   bash deque/tests/adversarial/against-mutants.sh [mutant ...]
#
# Most ordering mutants need weak memory to show, which x86 does not have;
# the loom suite and the mutation matrix are what catch those.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)
work=${ADVERSARIAL_WORK:-$(mktemp -d)}
mkdir -p "$work/src"
cat > "$work/Cargo.toml" <<TOML
[package]
name = "chase-lev-over-mutants"
version = "0.0.0"
edition = "2021"
publish = false

[lib]
name = "chase_lev"
path = "src/lib.rs"

[dependencies]
chase-lev-mutants = { path = "$repo/model-tests/builds/mutants" }

[[test]]
name = "adversarial"
path = "$repo/deque/tests/adversarial.rs"

[profile.test]
opt-level = 1
TOML
cat > "$work/src/lib.rs" <<'RUST'
//! chase-lev's public API over the mutant build.
pub use chase_lev_mutants::{Steal, Stealer};

/// A worker of the mutant build, with the mutant of ADVERSARIAL_MUTANT.
pub struct Worker<T>(chase_lev_mutants::Worker<T>);

fn mutant() -> Option<chase_lev_mutants::Mutant> {
    let name = std::env::var("ADVERSARIAL_MUTANT").ok()?;
    Some(chase_lev_mutants::Mutant::from_name(&name).expect("a mutant's name"))
}

impl<T> Worker<T> {
    fn make(fifo: bool, capacity: usize, bounded: bool) -> Self {
        Worker(chase_lev_mutants::Worker::new_mutant(fifo, capacity, bounded, mutant()))
    }
    pub fn new_lifo() -> Self { Self::make(false, 256, false) }
    pub fn new_fifo() -> Self { Self::make(true, 256, false) }
    pub fn new_lifo_with_capacity(capacity: usize) -> Self { Self::make(false, capacity, false) }
    pub fn new_fifo_with_capacity(capacity: usize) -> Self { Self::make(true, capacity, false) }
    pub fn new_lifo_bounded(capacity: usize) -> Self { Self::make(false, capacity, true) }
    pub fn new_fifo_bounded(capacity: usize) -> Self { Self::make(true, capacity, true) }
    pub fn stealer(&self) -> Stealer<T> { self.0.stealer() }
}

impl<T> std::ops::Deref for Worker<T> {
    type Target = chase_lev_mutants::Worker<T>;
    fn deref(&self) -> &Self::Target { &self.0 }
}
RUST
cd "$work"
cargo test --offline --test adversarial --no-run 2>/dev/null
binary=$(cargo test --offline --test adversarial --no-run --message-format=json 2>/dev/null \
    | grep -o '"executable":"[^"]*"' | tail -1 | cut -d'"' -f4)
mutants=("$@")
if [ ${#mutants[@]} -eq 0 ]; then
    mutants=(none take-fence steal-fence push-fence push-top-acquire steal-top-acquire
        steal-bottom-acquire buffer-publish-release buffer-load-acquire steal-cas-seqcst
        take-cas-seqcst fifo-cas-seqcst no-reload-after-grow steal-from-bottom
        skip-last-cas read-after-cas)
fi
for mutant in "${mutants[@]}"; do
    log="$work/$mutant.log"
    status=0
    if [ "$mutant" = none ]; then
        env -u ADVERSARIAL_MUTANT timeout 600 "$binary" >"$log" 2>&1 || status=$?
    else
        ADVERSARIAL_MUTANT=$mutant timeout 600 "$binary" >"$log" 2>&1 || status=$?
    fi
    failed=$(grep -E '^test .* FAILED$' "$log" | sed 's/^test //; s/ \.\.\. FAILED$//' | tr '\n' ' ' || true)
    echo "$mutant: exit $status; failing: ${failed:-none}"
done
echo "(logs in $work)"
