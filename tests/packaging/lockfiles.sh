#!/usr/bin/env bash
# What chase-lev adds to a user's lock file, counted on two tiny user crates
# made in a temporary directory (nothing is written in the repository):
#
# 1. a crate that depends on chase-lev by path: its lock file must hold that
#    crate, chase-lev and crossbeam-utils, and nothing else (loom, chase-lev's
#    optional dependency for `--cfg chase_lev_loom`, must not be there);
# 2. a crate that depends on rayon, locked twice: as it is, and with
#    `[patch.crates-io] crossbeam-deque` pointing at crossbeam-deque-drop-in/
#    (the README's "Switching from crossbeam-deque"). The patched lock file
#    must hold no more packages than the plain one, and must use the patch.
#
# Prints every count. Resolves offline from cargo's cache when it can, else
# online (the crates.io index). A few seconds.
#
#   bash tests/packaging/lockfiles.sh
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Writes a lock file for the crate in $1, offline if the cache has all it
# needs.
lock() {
    (cd "$1" && { cargo generate-lockfile --offline --quiet 2>/dev/null || cargo generate-lockfile --quiet; })
}
# The names of the packages in the lock file of $1, one a line, sorted.
packages() {
    awk '/^\[\[package\]\]/ {getline; sub(/^name = "/, ""); sub(/"$/, ""); print}' "$1/Cargo.lock" | sort
}

new_crate() { # dir, name, dependencies, extra manifest lines
    mkdir -p "$1/src"
    echo 'pub fn f() {}' >"$1/src/lib.rs"
    cat >"$1/Cargo.toml" <<TOML
[package]
name = "$2"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
$3
$4
[workspace]
TOML
}

fail=0

new_crate "$work/user" user "chase-lev = { path = \"$repo/deque\" }" ""
lock "$work/user"
user=$(packages "$work/user")
echo "a crate depending on chase-lev: $(echo "$user" | wc -l) packages in its lock file: $(echo $user)"
if [ "$user" != "$(printf '%s\n' chase-lev crossbeam-utils user | sort)" ]; then
    echo "FAIL: the lock file must hold the crate, chase-lev and crossbeam-utils only"
    fail=1
fi

new_crate "$work/rayon-plain" rayon-user 'rayon = "1.10"' ""
lock "$work/rayon-plain"
new_crate "$work/rayon-patched" rayon-user 'rayon = "1.10"' "
[patch.crates-io]
crossbeam-deque = { path = \"$repo/crossbeam-deque-drop-in\" }
"
lock "$work/rayon-patched"
plain=$(packages "$work/rayon-plain")
patched=$(packages "$work/rayon-patched")
echo "a crate depending on rayon: $(echo "$plain" | wc -l) packages: $(echo $plain)"
echo "the same crate with crossbeam-deque patched to the drop-in: $(echo "$patched" | wc -l) packages: $(echo $patched)"
if [ "$(echo "$patched" | wc -l)" -gt "$(echo "$plain" | wc -l)" ]; then
    echo "FAIL: the patch must not add packages to the lock file"
    fail=1
fi
if ! echo "$patched" | grep -qx chase-lev || grep -q '^\[\[patch.unused\]\]' "$work/rayon-patched/Cargo.lock"; then
    echo "FAIL: the patch was not used (no chase-lev in the lock file)"
    fail=1
fi
exit "$fail"
