#!/usr/bin/env bash
# The two packages a user gets from this repository, checked as published
# packages, apart from the repository around them:
#
# 1. chase-lev (deque/): `cargo package` (which builds the packed source)
#    and `cargo publish --dry-run`; then the `.crate` is unpacked into a
#    temporary directory and `cargo test` runs there, its own workspace: the
#    package's tests must pass with nothing but the package.
# 2. the drop-in crossbeam-deque (crossbeam-deque-drop-in/): it depends on
#    chase-lev 0.1.0, which is not on crates.io, so on its own `cargo publish
#    --dry-run` stops at "no matching package named `chase-lev` found"
#    (`--no-verify` does not help: packaging resolves its lock file against
#    crates.io, and ignores `[patch]`). So both packages are published
#    together, as cargo publishes a workspace's interdependent packages
#    (`cargo publish --dry-run --workspace`), from a copy of the two in a
#    temporary workspace, with `--no-verify`: verifying chase-lev there fails,
#    as the drop-in (crossbeam-deque 0.8.8) then shadows the real
#    crossbeam-deque 0.8.8 that chase-lev's tests compare with. The drop-in's
#    `.crate` is then built against chase-lev's unpacked `.crate`, which is
#    what the skipped verification would have done.
#
# Both manifests name docs.rs as their documentation (no home page or public
# repository address exists yet). Needs the crates.io index (online). Targets in target/packaging (under a minute from cold here).
#
#   bash tests/packaging/packages.sh
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
export CARGO_TARGET_DIR="$repo/target/packaging"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
version=$(awk -F'"' '/^version = / {print $2; exit}' deque/Cargo.toml)

echo "--- cargo package -p chase-lev"
cargo package -p chase-lev --allow-dirty
echo "--- cargo publish --dry-run -p chase-lev"
cargo publish --dry-run -p chase-lev --allow-dirty

echo "--- cargo test in the unpacked chase-lev-$version.crate"
tar -xzf "$CARGO_TARGET_DIR/package/chase-lev-$version.crate" -C "$work"
printf '\n[workspace]\n' >>"$work/chase-lev-$version/Cargo.toml"
(cd "$work/chase-lev-$version" && cargo test --locked)

echo "--- cargo publish --dry-run --workspace --no-verify: chase-lev and the drop-in together"
pair="$work/pair"
mkdir -p "$pair"
cp -r deque "$pair/deque"
cp -r crossbeam-deque-drop-in "$pair/crossbeam-deque-drop-in"
rm -rf "$pair/crossbeam-deque-drop-in/target" "$pair/crossbeam-deque-drop-in/Cargo.lock"
# The drop-in's own `[workspace]` table (its last line) goes: here it is a
# member. The root manifest's workspace tables (package fields, dependencies,
# lints: what deque/Cargo.toml inherits) come along, with these members only.
sed -i '/^\[workspace\]$/d' "$pair/crossbeam-deque-drop-in/Cargo.toml"
awk '/^members = \[/ {print "members = [\"deque\", \"crossbeam-deque-drop-in\"]"; skip = 1; next}
     skip && /^\]/ {skip = 0; next}
     skip || /^exclude = / {next}
     /^\[profile/ {exit}
     {print}' Cargo.toml >"$pair/Cargo.toml"
(
    cd "$pair"
    export CARGO_TARGET_DIR="$CARGO_TARGET_DIR/pair"
    cargo publish --dry-run --workspace --no-verify --allow-dirty
    # The same two `.crate`s where the step below reads them.
    cargo package --workspace --no-verify --allow-dirty --quiet
)

echo "--- the drop-in's .crate, built against chase-lev's"
drop_in_version=$(awk -F'"' '/^version = / {print $2; exit}' crossbeam-deque-drop-in/Cargo.toml)
tar -xzf "$CARGO_TARGET_DIR/pair/package/crossbeam-deque-$drop_in_version.crate" -C "$work"
(
    cd "$work/crossbeam-deque-$drop_in_version"
    rm -f Cargo.lock # resolved against the packages of the dry run
    printf '\n[workspace]\n\n[patch.crates-io]\nchase-lev = { path = "%s" }\n' \
        "$work/chase-lev-$version" >>Cargo.toml
    cargo build
    cargo test
)
echo "packages: both pass"
