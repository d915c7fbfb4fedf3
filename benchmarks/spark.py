"""strom on Spark local mode: how long until the TaskManagers are up, and W2 throughput vs the MiniCluster.

    python benchmarks/spark.py                 # N = 300k, 2 runs each, prints the tables
    python benchmarks/spark.py --quick         # smoke run
    python benchmarks/spark.py --write-docs    # ... and into docs/benchmarks.md (`make bench-spark`)

Startup: a fresh process creates the SparkSession (`local[2]`, strom's settings; the JVM starts here) and then
a SparkCluster with two TaskManagers, each a single-task Spark job; reported are SparkSession start, session
ready → both TaskManagers registered (cold: the first Spark jobs and Python workers of the session), and the
same again on the warm session. W2 is `benchmarks/windows.py`'s job (the peers' generator, job shape and
checksum) at p=1 and p=2, on the MiniCluster and on Spark `local[2]` in the same run, each checked against
the plain-loop reference computed in this process.
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
from typing import Any

from bench import DOCS, log, machine, md_table, splice_section, text_table
from windows import job_checksum, ref_w2, run

from strom import Configuration, StreamExecutionEnvironment

SECTION_BEGIN = "<!-- spark-benchmarks:begin -->"
SECTION_END = "<!-- spark-benchmarks:end -->"
MASTER = "local[2]"


def startup_probe() -> dict[str, float]:
    """In this (fresh) process: SparkSession start, then two SparkClusters of two TaskManagers each."""
    from strom.deploy.spark import SparkCluster
    from strom.deploy.spark.session import create_session

    t0 = time.monotonic()
    spark = create_session(Configuration({"spark.master": MASTER}), "strom-bench-startup")
    spark.sparkContext.setLogLevel("ERROR")
    session_s = time.monotonic() - t0
    times = []
    try:
        for _ in range(2):
            cluster = SparkCluster(Configuration(), num_task_managers=2, spark=spark).start()
            times.append(cluster.registered_at - cluster.session_started_at)
            cluster.close()
    finally:
        spark.stop()
    return {"session_s": session_s, "cold_s": times[0], "warm_s": times[1]}


def run_on(target: str, n: int, p: int, timeout: float) -> tuple[float, float, dict[str, int]]:
    conf = Configuration({"execution.target": target, "spark.master": MASTER}) if target == "spark" else None
    StreamExecutionEnvironment.set_context_configuration(conf)
    try:
        with tempfile.TemporaryDirectory(prefix="strom-bench-") as out:
            r = run("w2", n, p, out, timeout)
            return n / r.job_s, r.wall_s, job_checksum("w2", r)
    finally:
        StreamExecutionEnvironment.set_context_configuration(None)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--n", type=int)
    ap.add_argument("--repeat", type=int)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--write-docs", action="store_true")
    ap.add_argument("--startup-probe", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.startup_probe:
        print(json.dumps(startup_probe()))
        return
    n = a.n or (50_000 if a.quick else 300_000)
    repeat = a.repeat or (1 if a.quick else 2)

    probes: list[dict[str, float]] = []
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, __file__, "--startup-probe"], capture_output=True, text=True, timeout=300, check=True
        )
        probes.append(json.loads(out.stdout.strip().splitlines()[-1]))
        log(f"startup: {probes[-1]}")

    def span(key: str) -> str:
        values = [p[key] for p in probes]
        return f"{statistics.median(values):.2f} s ({min(values):.2f}–{max(values):.2f})"

    startup_header = ["step (local[2], 2 TaskManagers)", "time median (min–max)"]
    startup_rows = [
        ["SparkSession start (JVM, SparkContext)", span("session_s")],
        ["session ready → all TaskManagers registered (first jobs of the session)", span("cold_s")],
        ["the same on a warm session", span("warm_s")],
    ]
    print(text_table(startup_header, startup_rows))

    from strom.deploy.spark.session import create_session

    spark = create_session(Configuration({"spark.master": MASTER}), "strom-bench-w2")  # the Spark runs reuse it
    spark.sparkContext.setLogLevel("ERROR")
    t = time.perf_counter()
    expected = ref_w2(n)
    ref = n / (time.perf_counter() - t)
    log(f"plain loop {ref:,.0f} ev/s")
    rows = [["plain loop (ref.py)", "1 process", f"{ref:,.0f}", "1.00", "—", "reference"]]
    for p in (1, 2):
        for target in ("local", "spark"):
            rates, walls, ok = [], [], True
            for _ in range(repeat):
                rate, wall, checksum = run_on(target, n, p, a.timeout)
                ok = ok and checksum == expected
                rates.append(rate)
                walls.append(wall)
                log(f"W2 p={p} {target}: {rate:,.0f} ev/s (wall {wall:.1f} s) checksum {'ok' if ok else 'DIFFERS'}")
            med = statistics.median(rates)
            where = "MiniCluster" if target == "local" else f"Spark {MASTER}"
            rows.append(
                [
                    f"strom p={p}",
                    where,
                    f"{med:,.0f} ({min(rates):,.0f}–{max(rates):,.0f})",
                    f"{med / ref:.2f}",
                    f"{statistics.median(walls):.1f} s",
                    "equal" if ok else "DIFFERENT",
                ]
            )
    spark.stop()
    header = ["run", "TaskManagers in", "events/s median (min–max)", "× plain loop", "wall", "checksum vs ref"]
    print(text_table(header, rows))
    if a.write_docs:
        write_docs(n, repeat, startup_header, startup_rows, header, rows)


def write_docs(
    n: int, repeat: int, startup_header: list[str], startup_rows: list[list[str]], header: list[str], rows: Any
) -> None:
    m = machine()
    section = "\n".join(
        [
            SECTION_BEGIN,
            "## On Spark (local mode)",
            "",
            f"Run: {dt.date.today().isoformat()} · `python benchmarks/spark.py --write-docs` (`make bench-spark`) ·"
            f" PySpark {_pyspark_version()} · machine: {m.get('cpu', '?')}, Python {sys.version.split()[0]}",
            "",
            f"Startup, {repeat} fresh processes: the SparkSession (`{MASTER}`) and two TaskManagers, each its own"
            " single-task Spark job.",
            "",
            md_table(startup_header, startup_rows),
            "",
            f"W2 (as in the window benchmarks: 1 s tumbling event-time windows per key, N = {n:,}, {repeat} runs"
            " each) on the MiniCluster and on Spark in the same run; events/s = N / in-job time (first source open"
            " → last sink close), so Spark's startup is not in it; the wall column (execute() to its result) has the"
            " TaskManagers' start on the already running SparkSession.",
            "",
            md_table(header, rows),
            "",
            "Once running, a job on Spark uses the same data plane (the TaskManagers talk to each other over strom's"
            " own TCP connections; Spark only hosts the processes), so the two targets should differ by noise: this"
            " machine's speed drifts by up to ±30 % within minutes (two plain loops run side by side measured 183 k to"
            " 300 k events/s each within one minute) — compare medians of interleaved runs, not single rows.",
            SECTION_END,
        ]
    )
    DOCS.write_text(splice_section(DOCS.read_text(), section, SECTION_BEGIN, SECTION_END))
    log(f"wrote {DOCS}")


def _pyspark_version() -> str:
    import pyspark

    return str(pyspark.__version__)


if __name__ == "__main__":
    main()
