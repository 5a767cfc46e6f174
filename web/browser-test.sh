#!/usr/bin/env bash
# Runs the explorer's headless-browser test (web/tests/browser.mjs) against
# the page built by web/build.sh. Installs what it needs when missing:
# Debian's chromium (apt) and playwright-core (npm ci; it downloads no browser).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x /usr/bin/chromium ]; then
    sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
fi
(cd web && npm ci --no-audit --no-fund --loglevel=error)
cargo build --release --bin sim-cli
node web/tests/browser.mjs
