#!/usr/bin/env bash
# A user who model-checks a scheduler with chase-lev inside builds it with
# `--cfg chase_lev_loom` and the feature `loom`: that build must show the
# same public items as the normal one (no test hooks, no model types). Builds
# rustdoc's pages of both and compares every item page and, on each, every
# item and method anchor outside the blanket impls (a loom build's types pick
# up the blanket impls of loom's own dependencies, which are not chase-lev's
# items). Prints the count; exits non-zero with the difference.
#
# Usage: bash tests/packaging/public_items.sh   (about a minute from cold)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
cargo doc --quiet -p chase-lev --no-deps --target-dir target/public-items/std
RUSTFLAGS="--cfg chase_lev_loom" RUSTDOCFLAGS="--cfg chase_lev_loom" \
    cargo doc --quiet -p chase-lev --features loom --no-deps --target-dir target/public-items/loom
items() {
    python3 - "$1/doc/chase_lev" <<'PY'
import os, re, sys
root = sys.argv[1]
for page in sorted(os.listdir(root)):
    if not page.endswith(".html") or page in ("all.html", "index.html", "sidebar-items.js"):
        continue
    print(page)
    html = open(os.path.join(root, page)).read().split('id="blanket-implementations"')[0]
    for anchor in sorted(set(re.findall(r'id="((?:method|tymethod|variant|structfield|associatedconstant|impl)\.[^"]*)"', html))):
        print(f"{page}#{anchor}")
PY
}
if diff <(items target/public-items/std) <(items target/public-items/loom); then
    echo "public items: the same $(items target/public-items/std | wc -l) in the normal and the chase_lev_loom build"
else
    echo "public items differ between the normal build (<) and the chase_lev_loom build (>)"
    exit 1
fi
