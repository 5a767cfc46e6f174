#!/usr/bin/env bash
# The whole test suite, as the README's test command: the Rust tests of every
# crate, then the wasm build, the native-vs-wasm32 determinism test and the
# headless-browser test. It stops at the first step that fails and always
# ends with one line totalling every test that ran, from every step:
# "N passed, N failed" (each runner prints its own "test result:" line; this
# adds them up, so the last line is never one runner's count alone).
set -uo pipefail
cd "$(dirname "$0")/.."

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
for step in "cargo test --workspace" web/build.sh web/determinism-test.sh web/browser-test.sh; do
    echo "+ $step"
    $step 2>&1 | tee -a "$log"
    status=${PIPESTATUS[0]}
    if [ "$status" -ne 0 ]; then
        echo "run-all: \`$step\` failed (exit $status); later steps not run" >&2
        break
    fi
done
passed=$(grep -Eo 'test result: [a-zA-Z]+\. [0-9]+ passed' "$log" | awk '{s += $4} END {print s + 0}')
failed=$(grep -Eo 'test result: [a-zA-Z]+\. [0-9]+ passed; [0-9]+ failed' "$log" | awk '{s += $6} END {print s + 0}')
echo
echo "$passed passed, $failed failed"
exit "$status"
