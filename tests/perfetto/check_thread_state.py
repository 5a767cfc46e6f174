#!/usr/bin/env python3
"""Loads a schedlab trace (sim-cli run SCEN --trace FILE.json) into Perfetto's
own trace processor and prints its thread_state table in the layout of
tests/perfetto/*.thread_state.tsv; with an expected table, compares them.

    check_thread_state.py TRACE.json [EXPECTED.tsv]

The trace processor: the binary named by $TRACE_PROCESSOR_SHELL if set, else
the one the `perfetto` Python package (pip install perfetto) fetches on first
use. When neither can be had, prints "SKIPPED: trace_processor_shell not
available (...)" and exits with status 77, so tests can tell a skip from a
failure. Exit status 0: the tables agree (or no expected table was given);
1: they differ (both are printed).
"""

import os
import sys

SKIP = 77

QUERY = """
SELECT s.ts, s.dur, t.tid, t.name AS thread, s.state, w.tid AS waker_tid
FROM thread_state s
JOIN thread t USING (utid)
LEFT JOIN thread w ON w.utid = s.waker_utid
ORDER BY t.tid, s.ts, s.id
"""


def skip(why):
    print(f"SKIPPED: trace_processor_shell not available ({why})")
    sys.exit(SKIP)


def table(trace_path):
    try:
        from perfetto.trace_processor import TraceProcessor, TraceProcessorConfig
    except ImportError as e:
        skip(f"the perfetto Python package is not installed: {e}")
    bin_path = os.environ.get("TRACE_PROCESSOR_SHELL") or None
    try:
        tp = TraceProcessor(trace=trace_path, config=TraceProcessorConfig(bin_path=bin_path))
    except Exception as e:  # the download or the start failed
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        skip(f"{type(e).__name__}: {first[:200]}")
    try:
        lines = ["# ts_ns\tdur_ns\ttid\tthread\tstate\twaker_tid"]
        for r in tp.query(QUERY):
            waker = "" if r.waker_tid is None else str(r.waker_tid)
            lines.append(f"{r.ts}\t{r.dur}\t{r.tid}\t{r.thread}\t{r.state}\t{waker}")
        return "\n".join(lines) + "\n"
    finally:
        tp.close()


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    got = table(sys.argv[1])
    if len(sys.argv) == 2:
        sys.stdout.write(got)
        return
    with open(sys.argv[2], encoding="utf-8") as f:
        # Lines starting with "##" are the expected file's own comments.
        expected = "".join(l for l in f if not l.startswith("##"))
    if got != expected:
        print("Perfetto's thread_state differs from " + sys.argv[2])
        print("--- trace processor\n" + got + "--- expected\n" + expected)
        sys.exit(1)
    print(f"trace processor: thread_state matches {sys.argv[2]}")


if __name__ == "__main__":
    main()
