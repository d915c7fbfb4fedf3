"""What declared types cost: W1 and W2 with PyFlink's ``output_type=`` / ``key_type=`` against the same jobs untyped.

    python benchmarks/typed.py                 # 5 rounds, N = 1M (W1) / 500k (W2), p=1, prints the table
    python benchmarks/typed.py --quick         # smoke run
    python benchmarks/typed.py --write-docs    # ... and rewrite its section of docs/benchmarks.md (`make bench-typed`)

An untyped stream carries pickled Python objects and pays nothing for types. A typed one checks every record at
each operator output that declares a type (``Types.TUPLE([Types.LONG(), Types.STRING(), ...])`` checks each
field, a ``Types.INT()`` checks the 32-bit range), as PyFlink converts at its boundaries: one generated loop per
batch that passes a batch that fits on as itself, and converts the records of one that does not. Each round runs
the plain Python loop (the same generator and functions in this process), then the untyped and the typed job in
turn; the ratios are paired within rounds, so a machine whose speed drifts moves both sides of a ratio together.
Job time is measured inside the job as in ``bench.py`` (max(sink close) − min(source open)).
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import tempfile
import time
from typing import Any

from bench import DOCS, machine, md_table, splice_section
from jobs import CountingSink, JobRun, RunningCountSink, TimedMap, _env, _execute
from workloads import ceiling_w1, ceiling_w2, event, w1_filter, w1_map, w2_key, w2_reduce, w2_to_value

from strom.common import Types

BEGIN = "<!-- typed-benchmarks:begin -->"
END = "<!-- typed-benchmarks:end -->"

EVENT = Types.TUPLE([Types.LONG(), Types.STRING(), Types.LONG(), Types.LONG()])
W2_VALUE = Types.TUPLE([Types.STRING(), Types.LONG(), Types.LONG()])


def run_w1(
    n: int, out_dir: str, typed: bool, timeout_s: float, parallelism: int = 1, config: dict[str, Any] | None = None
) -> JobRun:
    env = _env(parallelism, config=config)
    kw: dict[str, Any] = {"output_type": EVENT} if typed else {}
    (
        env.from_sequence(0, n - 1)
        .map(TimedMap(event, out_dir), **kw)
        .map(w1_map, **kw)
        .filter(w1_filter)
        .sink_to(CountingSink(out_dir))
    )
    return _execute(env, f"bench W1 {'typed' if typed else 'untyped'}", out_dir, timeout_s)


def run_w2(
    n: int, out_dir: str, typed: bool, timeout_s: float, parallelism: int = 1, config: dict[str, Any] | None = None
) -> JobRun:
    env = _env(parallelism, config=config)
    source = env.from_sequence(0, n - 1).map(TimedMap(event, out_dir), **({"output_type": EVENT} if typed else {}))
    values = source.map(w2_to_value, output_type=W2_VALUE) if typed else source.map(w2_to_value)
    keyed = values.key_by(w2_key, key_type=Types.STRING()) if typed else values.key_by(w2_key)
    keyed.reduce(w2_reduce).sink_to(RunningCountSink(out_dir))
    return _execute(env, f"bench W2 {'typed' if typed else 'untyped'}", out_dir, timeout_s)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--n-w1", type=int)
    ap.add_argument("--n-w2", type=int)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--write-docs", action="store_true")
    a = ap.parse_args(argv)
    rounds = a.rounds or (1 if a.quick else 5)
    sizes = {"W1": a.n_w1 or (50_000 if a.quick else 1_000_000), "W2": a.n_w2 or (25_000 if a.quick else 500_000)}
    runs = {"W1": run_w1, "W2": run_w2}
    ceilings = {"W1": ceiling_w1, "W2": ceiling_w2}
    # per workload: lists of (loop s, untyped job s, typed job s), one per round
    got: dict[str, list[tuple[float, float, float]]] = {"W1": [], "W2": []}
    for r in range(rounds):
        for w, n in sizes.items():
            t0 = time.perf_counter()
            ceilings[w](n)
            loop_s = time.perf_counter() - t0
            times = []
            results = []
            for typed in (False, True) if r % 2 == 0 else (True, False):  # alternate who goes first
                with tempfile.TemporaryDirectory(prefix="strom-bench-typed-") as out:
                    run = runs[w](n, out, typed, a.timeout)
                times.append((typed, run.job_s))
                results.append(run.result)
            if results[0] != results[1]:
                raise SystemExit(f"{w}: the typed and untyped jobs disagree: {results[0]} vs {results[1]}")
            by = dict(times)
            got[w].append((loop_s, by[False], by[True]))
            print(
                f"round {r + 1}/{rounds} {w}: loop {n / loop_s:,.0f}/s, untyped {n / by[False]:,.0f}/s, "
                f"typed {n / by[True]:,.0f}/s",
                file=sys.stderr,
            )
    rows = []
    for w, triples in got.items():
        n = sizes[w]
        med = statistics.median
        rows.append(
            [
                w,
                f"{n:,}",
                f"{med(n / lp for lp, _, _ in triples):,.0f}",
                f"{med(n / u for _, u, _ in triples):,.0f}",
                f"{med(n / t for _, _, t in triples):,.0f}",
                f"{med(lp / u for lp, u, _ in triples):.2f}",
                f"{med(u / t for _, u, t in triples):.2f}",
            ]
        )
    header = [
        "workload (p=1)",
        "N",
        "plain loop rec/s",
        "untyped rec/s",
        "typed rec/s",
        "untyped/loop",
        "typed/untyped",
    ]
    table = md_table(header, rows)
    print(table)
    if a.write_docs:
        m = machine()
        section = "\n".join(
            [
                BEGIN,
                "## Typed streams (PyFlink's declared types)",
                "",
                f"Measured {dt.date.today().isoformat()} on {m['cpu']}, {m['ram']}, {m['python']}, commit "
                f"{m['commit']}; `python benchmarks/typed.py {' '.join(sys.argv[1:])}`; {rounds} rounds, medians of "
                "the per-round figures; ratios paired within rounds (throughput ratios: above 1 is faster).",
                "",
                "W1 declares `Types.TUPLE([LONG, STRING, LONG, LONG])` at both maps; W2 declares the event tuple, "
                "the `(key, sum, count)` tuple and `key_type=Types.STRING()`. Each declared output checks every "
                "record's fields (one generated loop per batch; a batch that fits passes as itself). The typed and "
                "untyped jobs' results are equal (checked every round). Wall-clock rates: on a busy machine see "
                "the instruction counts below.",
                "",
                table,
                END,
            ]
        )
        DOCS.write_text(splice_section(DOCS.read_text() if DOCS.exists() else "", section, BEGIN, END))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
