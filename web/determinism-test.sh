#!/usr/bin/env bash
# Cross-target determinism (web/tests/determinism.mjs): every shipped
# scenario, base and variants, each base under kernels 6.6, 6.12 and 6.18 too (an override),
# and the explosive scenarios, run natively by
# the release sim-cli and as wasm32 by the page's module under Node; the JSON
# reports must match byte for byte. Run after web/build.sh (which builds the
# module). Needs Node only: no browser and no npm package.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v node >/dev/null || { echo "determinism-test.sh: needs node (v18 or later)" >&2; exit 1; }
[ -f web/www/pkg/web_bg.wasm ] || { echo "determinism-test.sh: run web/build.sh first (no web/www/pkg/web_bg.wasm)" >&2; exit 1; }
cargo build --release --bin sim-cli
node web/tests/determinism.mjs
