"""strom SQL vs the same job in strom's DataStream API vs a plain Python loop (issue 34, "Measure"), and PyFlink
2.3 SQL on the JVM when ``PYFLINK=`` names its interpreter.

    python benchmarks/sql_window_count.py                      # N = 1M rows, 3 rounds, prints the table
    python benchmarks/sql_window_count.py --rows 200000 --rounds 1 --queries window_tvf
    python benchmarks/sql_window_count.py --pyflink /work/pyflink-venv/bin/python --write-docs   # `make bench-sql`

Queries (``sql_jobs.QUERIES``) over a ``datagen`` sequence ``i`` with computed columns ``user_id`` (1 000 users) and
``ts`` (10 000 rows per second of event time): the 1 s tumbling window count per user as a window TVF and as a
group window (the Table API's ``window(Tumble…)``; PyFlink runs SQL's ``GROUP BY TUMBLE(ts, …)``), a non-windowed
``GROUP BY user_id`` with ``SUM``, and a Calc (projection + filter). Each round runs the plain loop, then for each
query strom SQL and the DataStream form (order alternating by round), at parallelism 1 on one one-slot TaskManager;
job time = the sink writer's open → close (it opens with the job's other tasks), CPU = the TaskManager process's
CPU time over the same span; ratios are taken within a round and the median over rounds is reported. Every run's
checksum is compared with the plain loop's.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench import DOCS, log, machine, md_table, splice_section, text_table
from jobs import read_parts
from sql_jobs import FOLD, QUERIES, datastream_job, reference, sql_job

from strom import Configuration, StreamExecutionEnvironment

# the run line and the table only: the prose of the section around them (docs/benchmarks.md) is written by hand
SECTION_BEGIN = "<!-- sql-benchmarks-table:begin -->"
SECTION_END = "<!-- sql-benchmarks-table:end -->"
HERE = Path(__file__).resolve().parent
FORMS = ("strom SQL", "strom DataStream")
TITLES = {
    "window_tvf": "TUMBLE window TVF, COUNT(*) per user",
    "window_group": "group window TUMBLE(ts, 1 s), COUNT per user",
    "group": "GROUP BY user_id, SUM(i)",
    "calc": "Calc: SELECT user_id, i*3+1 WHERE MOD(i,3)<>0 AND user_id<900",
}


def run_form(form: str, query: str, n: int, timeout_s: float) -> dict[str, Any]:
    env = StreamExecutionEnvironment.get_execution_environment(Configuration({"taskmanager.numberOfTaskSlots": 1}))
    env.set_parallelism(1)
    with tempfile.TemporaryDirectory(prefix="strom-sql-bench-") as out:
        (sql_job if form == "strom SQL" else datastream_job)(env, query, n, out)
        t0 = time.monotonic()
        env.execute(f"{form} {query}")
        wall = time.monotonic() - t0
        (part,) = read_parts(out, "sink")
    job_s = (part["t_close"] - part["t_open"]) / 1e9
    cpu_s = (part["cpu_close"] - part["cpu_open"]) / 1e9
    keys = ("keys", "total", "hash") if FOLD[query] == "table" else ("rows", "total", "hash")
    return {"job_s": job_s, "cpu_s": cpu_s, "wall_s": wall, "checksum": {k: part[k] for k in keys}}


def run_pyflink(python: str, queries: list[str], n: int) -> dict[str, Any]:
    cmd = [python, str(HERE / "sql_window_count_pyflink.py"), "--rows", str(n), "--queries", ",".join(queries)]
    log(f"PyFlink: {' '.join(cmd)}")
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"PyFlink run failed ({done.returncode}): {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def measure(queries: list[str], n: int, rounds: int, timeout_s: float, fixed_rows: int = 0) -> dict[str, Any]:
    """``rounds`` rounds; with ``fixed_rows`` each form also runs on that few rows, so the marginal CPU per row
    (start-up — unpickling, imports, compiling the generated code — taken out) is the difference over the rows."""
    runs: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    loops: dict[str, list[float]] = defaultdict(list)
    expected: dict[str, dict[str, int]] = {}
    for r in range(rounds):
        for q in queries:
            t = time.process_time()
            expected[q] = reference(q, n)
            loops[q].append(time.process_time() - t)
            for form in FORMS if r % 2 == 0 else tuple(reversed(FORMS)):
                got = run_form(form, q, n, timeout_s)
                got["ok"] = got["checksum"] == expected[q]
                if fixed_rows:
                    small = run_form(form, q, fixed_rows, timeout_s)
                    got["ok"] = got["ok"] and small["checksum"] == reference(q, fixed_rows)
                    got["marginal_us"] = (got["cpu_s"] - small["cpu_s"]) / (n - fixed_rows) * 1e6
                runs[(q, form)].append(got)
                verdict = "equal" if got["ok"] else f"DIFFERS {got['checksum']} vs {expected[q]}"
                log(f"round {r + 1} {q} {form}: job {got['job_s']:.2f} s, CPU {got['cpu_s']:.2f} s, {verdict}")
    return {"runs": runs, "loops": loops, "expected": expected}


def _med(xs: list[float]) -> float:
    return statistics.median(xs)


def rows_of(result: dict[str, Any], n: int, pyflink: dict[str, Any] | None) -> list[list[str]]:
    runs, loops, expected = result["runs"], result["loops"], result["expected"]
    out = []
    for q in expected:
        sql, ds = runs[(q, "strom SQL")], runs[(q, "strom DataStream")]
        paired_job = [d["job_s"] / s["job_s"] for s, d in zip(sql, ds, strict=True)]
        paired_cpu = [d["cpu_s"] / s["cpu_s"] for s, d in zip(sql, ds, strict=True)]
        for form, rs in (("strom SQL", sql), ("strom DataStream", ds)):
            ratio = (
                f"**{_med(paired_job):.2f}** / **{_med(paired_cpu):.2f}** ({min(paired_job):.2f}–{max(paired_job):.2f})"
                if form == "strom SQL"
                else "1"
            )
            ok = "equal" if all(x["ok"] for x in rs) else "**DIFFERS**"
            job, cpu = _med([x["job_s"] for x in rs]), _med([x["cpu_s"] for x in rs])
            marginal = f"{_med([x['marginal_us'] for x in rs]):.2f} µs" if "marginal_us" in rs[0] else "—"
            cells = [f"{job:.2f} s", f"{cpu / n * 1e6:.2f} µs", marginal, f"{n / job:,.0f}", ratio, ok]
            out.append([TITLES[q], form, *cells])
        loop = _med(loops[q])
        per_row = f"{loop / n * 1e6:.2f} µs"
        out.append([TITLES[q], "plain Python loop (CPU)", "—", per_row, per_row, f"{n / loop:,.0f}", "—", "ref"])
        if pyflink and q in pyflink:
            p = pyflink[q]
            same = "equal" if p["checksum"] == expected[q] else f"**DIFFERS** {p['checksum']}"
            wall = p["wall_s"]
            cells = [f"{wall:.2f} s", "—", "—", f"{n / wall:,.0f}", "—", same]
            out.append([TITLES[q], "PyFlink 2.3 SQL (JVM), wall", *cells])
    return out


HEADER = ["query", "form", "job time (median)", "CPU / row", "marginal CPU / row", "rows/s"]
HEADER.append("DataStream ÷ SQL: job / CPU (min–max)")
HEADER.append("result")


def render(rows: list[list[str]], args: argparse.Namespace, started: str, load: str) -> str:
    m = machine()
    lines = [
        SECTION_BEGIN,
        f"_Table of the run {started}: N = {args.rows:,} rows · {args.rounds} rounds · {m.get('cpu', '?')}, "
        f"{m.get('python', '?')} · load average at start {load} (rewritten by `make bench-sql`; the text around it "
        "is not)._",
        "",
        md_table(HEADER, rows),
        SECTION_END,
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--queries", default=",".join(QUERIES))
    ap.add_argument("--pyflink", default="", help="PyFlink 2.3's python: also run the queries on Flink's JVM")
    ap.add_argument("--pyflink-results", default="", help="the JSON line of an earlier sql_window_count_pyflink.py run")
    ap.add_argument("--fixed-rows", type=int, default=0, help="also run each form on this many rows (start-up cost)")
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--json", default="", help="write the raw runs here")
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args(argv)
    queries = [q for q in args.queries.split(",") if q]
    started = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    load = " / ".join(f"{x:.2f}" for x in __import__("os").getloadavg())
    result = measure(queries, args.rows, args.rounds, args.timeout, args.fixed_rows)
    pyflink = run_pyflink(args.pyflink, queries, args.rows) if args.pyflink else None
    if args.pyflink_results:
        pyflink = json.loads(Path(args.pyflink_results).read_text().strip().splitlines()[-1])
    rows = rows_of(result, args.rows, pyflink)
    print(text_table(HEADER, rows))
    if args.json:
        raw = {f"{q}|{f}": v for (q, f), v in result["runs"].items()}
        Path(args.json).write_text(json.dumps({"runs": raw, "loops": result["loops"], "pyflink": pyflink}))
    if args.write_docs:
        text = DOCS.read_text()
        DOCS.write_text(splice_section(text, render(rows, args, started, load), SECTION_BEGIN, SECTION_END))
        log(f"wrote {DOCS}")
    ok = all(x["ok"] for rs in result["runs"].values() for x in rs)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
