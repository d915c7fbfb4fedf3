"""CPU per row of the strom SQL form of ``sql_window_count.py``'s queries in two source trees, run alternately
(paired within rounds), with the DataStream form of the second tree in the same rounds (issue 34's before/after).

    python benchmarks/sql_before_after.py --before /path/to/old/checkout --after . --rows 300000 --rounds 3

Each run is a fresh interpreter with ``PYTHONPATH`` = that tree (so the MiniCluster's TaskManager imports it too);
the figure is the TaskManager process's CPU time from the sink's open to its close over the rows (see
``sql_window_count.run_form``), the medians over rounds and of the per-round ratios are printed. Every run's
checksum must equal the plain loop's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ONE_RUN = (
    "import json, sys; from sql_window_count import run_form; from sql_jobs import reference; "
    "form, q, n = sys.argv[1], sys.argv[2], int(sys.argv[3]); r = run_form(form, q, n, 900.0); "
    "print(json.dumps({'us': r['cpu_s'] / n * 1e6, 'ok': r['checksum'] == reference(q, n)}))"
)


def one_run(tree: Path, form: str, query: str, rows: int) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=f"{tree}{os.pathsep}{tree / 'benchmarks'}")
    cmd = [sys.executable, "-c", ONE_RUN, form, query, str(rows)]
    done = subprocess.run(cmd, cwd=tree / "benchmarks", env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"run in {tree} failed ({done.returncode}): {done.stderr[-2000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    if not result["ok"]:
        raise RuntimeError(f"expected the plain loop's checksum; got another in {tree} {form} {query}")
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, help="the old source tree (a checkout or `git archive` of it)")
    ap.add_argument("--after", default=str(HERE.parent))
    ap.add_argument("--rows", type=int, default=300_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--queries", default="window_tvf,group,calc")
    args = ap.parse_args(argv)
    before, after = Path(args.before).resolve(), Path(args.after).resolve()
    runs = [("before", before, "strom SQL"), ("after", after, "strom SQL"), ("DataStream", after, "strom DataStream")]
    cpu: dict[tuple[str, str], list[float]] = {}
    for r in range(args.rounds):
        for q in args.queries.split(","):
            for name, tree, form in runs if r % 2 == 0 else list(reversed(runs)):
                us = one_run(tree, form, q, args.rows)["us"]
                cpu.setdefault((q, name), []).append(us)
                print(f"round {r + 1} {q} {name}: {us:.2f} µs/row", file=sys.stderr, flush=True)
    for q in args.queries.split(","):
        b, a, d = (cpu[(q, n)] for n in ("before", "after", "DataStream"))
        gain = statistics.median(x / y for x, y in zip(b, a, strict=True))
        ratio = statistics.median(x / y for x, y in zip(a, d, strict=True))
        print(
            f"{q}: before {statistics.median(b):.2f} µs, after {statistics.median(a):.2f} µs (before ÷ after "
            f"{gain:.2f}), DataStream {statistics.median(d):.2f} µs (SQL ÷ DataStream {ratio:.2f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
