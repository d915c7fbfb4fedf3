"""Work per event, counted in CPU instructions under valgrind: W1 at parallelism 1 and W2 at parallelism 1 and 2,
each against its plain loop.

    python benchmarks/instructions.py                # N = 200k, prints the tables (~5 min)
    python benchmarks/instructions.py --only w1      # W1 alone
    python benchmarks/instructions.py --write-docs   # ... and into docs/benchmarks.md (`make bench-instructions`)

Throughput on a shared VM drifts by ±30 % within minutes, which hides changes of a few per cent and makes the
p=2 / p=1 scaling of a single run a coin toss. Instructions do not drift: valgrind's cachegrind
(``--cache-sim=no``) counts every instruction each process executes, deterministically up to the few that depend
on timing (polling, periodic timers). Each configuration runs twice, at N and at N/10 events, and the difference
divided by the difference in events is the work per event — start-up, imports and teardown cancel out. Only
TaskManager processes are counted (the client and JobManager do not touch records).

What this does *not* see: cache misses, GIL hand-overs and idle time, which is what separates the ratio of
instructions from the ratio of throughput. The *scaling bound* printed is 2 / (p=2 work ÷ p=1 work): what two
cores could give if both were always busy and ran instructions as fast as one core running p=1.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench import DOCS, ROOT, log, machine, md_table, splice_section, text_table

SECTION_BEGIN = "<!-- instruction-benchmarks:begin -->"
SECTION_END = "<!-- instruction-benchmarks:end -->"

JOB = """
import sys, tempfile
sys.path.insert(0, {bench!r})
from windows import job_checksum, ref_w2, run
with tempfile.TemporaryDirectory() as d:
    r = run("w2", {n}, {p}, d, 3600, split={split})
assert job_checksum("w2", r) == ref_w2({n}), "checksum differs from the plain loop's"
"""
LOOP = """
import sys
sys.path.insert(0, {bench!r})
from windows import ref_w2
ref_w2({n})
"""
JOB_W1 = """
import sys, tempfile
sys.path.insert(0, {bench!r})
from jobs import run_w1
from workloads import ceiling_w1
SLOW = {{"taskmanager.registration.timeout": "900 s", "heartbeat.timeout": "900 s"}}  # valgrind starts slowly
with tempfile.TemporaryDirectory() as d:
    r = run_w1({n}, {p}, d, 3600, config=SLOW)
assert r.result["records"] == ceiling_w1({n})["records"], "record count differs from the plain loop's"
"""
LOOP_W1 = """
import sys
sys.path.insert(0, {bench!r})
from workloads import ceiling_w1
ceiling_w1({n})
"""


def count(code: str, out_dir: Path) -> dict[str, int]:
    """Run ``code`` in a fresh interpreter under cachegrind; instructions per process, by its command line."""
    out_dir.mkdir(parents=True)
    cmd = [
        "valgrind",
        "--tool=cachegrind",
        "--cache-sim=no",
        "--trace-children=yes",
        f"--cachegrind-out-file={out_dir}/cg.%p",
        sys.executable,
        "-c",
        code,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=3600)
    if proc.returncode != 0:
        raise RuntimeError(
            f"expected the run under valgrind to succeed; got exit {proc.returncode}:\n{proc.stderr[-2000:]}"
        )
    counts: dict[str, int] = {}
    for f in sorted(out_dir.glob("cg.*")):
        text = f.read_text()
        cmd_line = re.search(r"^cmd: (.*)$", text, re.M)
        summary = re.search(r"^summary: (\d+)", text, re.M)
        if cmd_line and summary:
            counts[f"{f.name} {cmd_line.group(1)}"] = int(summary.group(1))
    return counts


def task_managers(counts: dict[str, int]) -> int:
    tms = [v for k, v in counts.items() if "strom.runtime.taskexecutor" in k]
    if not tms:
        raise RuntimeError("expected TaskManager processes under valgrind; found none (--trace-children?)")
    return sum(tms)


def client(counts: dict[str, int]) -> int:
    return sum(v for k, v in counts.items() if "strom.runtime.taskexecutor" not in k)


def per_event(n: int, small: int, big_count: int, small_count: int) -> float:
    return (big_count - small_count) / (n - small)


def measure_w1(n: int, small: int, base: Path) -> dict[str, float]:
    """W1's instructions per event: the plain loop (``ceiling_w1``) and strom at p=1 (TaskManagers)."""
    bench = str(ROOT / "benchmarks")
    per: dict[str, float] = {}
    big = count(LOOP_W1.format(bench=bench, n=n), base / "w1-loop-big")
    little = count(LOOP_W1.format(bench=bench, n=small), base / "w1-loop-small")
    per["plain loop"] = per_event(n, small, client(big), client(little))
    log(f"W1 plain loop: {per['plain loop']:,.0f} instructions/event")
    big = count(JOB_W1.format(bench=bench, n=n, p=1), base / "w1-p1-big")
    little = count(JOB_W1.format(bench=bench, n=small, p=1), base / "w1-p1-small")
    per["p=1"] = per_event(n, small, task_managers(big), task_managers(little))
    log(f"W1 strom p=1: {per['p=1']:,.0f} instructions/event (TaskManagers)")
    return per


def measure_w2(n: int, small: int, base: Path) -> dict[str, float]:
    """W2's instructions per event: the plain loop (``ref.py``) and strom at p=1, p=2 and p=1 split."""
    bench = str(ROOT / "benchmarks")
    per: dict[str, float] = {}
    big = count(LOOP.format(bench=bench, n=n), base / "loop-big")
    little = count(LOOP.format(bench=bench, n=small), base / "loop-small")
    per["plain loop"] = per_event(n, small, client(big), client(little))
    log(f"plain loop: {per['plain loop']:,.0f} instructions/event")
    for name, p, split in (("p=1", 1, False), ("p=2", 2, False), ("split", 1, True)):
        big = count(JOB.format(bench=bench, n=n, p=p, split=split), base / f"{name}-big")
        little = count(JOB.format(bench=bench, n=small, p=p, split=split), base / f"{name}-small")
        per[name] = per_event(n, small, task_managers(big), task_managers(little))
        log(f"strom {name}: {per[name]:,.0f} instructions/event (TaskManagers)")
    return per


def w1_rows(per: dict[str, float]) -> list[list[str]]:
    loop, p1 = per["plain loop"], per["p=1"]
    return [
        ["W1 plain loop (`ceiling_w1`), 1 process", f"{loop:,.0f}", "1.00"],
        ["W1 strom p=1, 1 TaskManager", f"{p1:,.0f}", f"{p1 / loop:.2f}"],
    ]


def w2_rows(per: dict[str, float]) -> list[list[str]]:
    loop, p1, p2, split1 = per["plain loop"], per["p=1"], per["p=2"], per["split"]
    return [
        ["plain loop (ref.py), 1 process", f"{loop:,.0f}", "1.00", "—"],
        ["strom p=1, 1 TaskManager", f"{p1:,.0f}", f"{p1 / loop:.2f}", "—"],
        ["strom p=2, 2 TaskManagers (sum)", f"{p2:,.0f}", f"{p2 / loop:.2f}", f"{p2 / p1:.3f}"],
        [
            "strom p=1, windows in their own slot: 2 TaskManagers (sum), every record crosses",
            f"{split1:,.0f}",
            f"{split1 / loop:.2f}",
            f"{split1 / p1:.3f}",
        ],
    ]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--only", default="w1,w2", help="comma-separated subset of w1,w2")
    ap.add_argument("--write-docs", action="store_true")
    a = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        sys.exit("instructions.py: expected valgrind on the PATH; got none; hint: apt-get install valgrind")
    only = set(a.only.split(","))
    if not only or only - {"w1", "w2"}:
        ap.error(f"--only expects w1, w2; got {a.only}")
    if a.write_docs and only != {"w1", "w2"}:
        ap.error("--write-docs measures both workloads; drop --only")
    n, small = a.n, a.n // 10
    with tempfile.TemporaryDirectory(prefix="strom-instr-") as tmp:
        w1 = measure_w1(n, small, Path(tmp)) if "w1" in only else None
        w2 = measure_w2(n, small, Path(tmp)) if "w2" in only else None
    w1_header = ["W1 run", "instructions / event", "× plain loop"]
    header = ["W2 run", "instructions / event", "× plain loop", "× p=1"]
    if w1 is not None:
        print(text_table(w1_header, w1_rows(w1)))
    if w2 is None:
        return
    rows = w2_rows(w2)
    print(text_table(header, rows))
    bound = 2 * w2["p=1"] / w2["p=2"]
    print(f"scaling bound on 2 cores: 2 / {w2['p=2'] / w2['p=1']:.3f} = {bound:.2f} × p=1")
    if a.write_docs and w1 is not None:
        m = machine()
        section = "\n".join(
            [
                SECTION_BEGIN,
                "## Work per event (instruction counts)",
                "",
                f"Run: {dt.date.today().isoformat()} · `python benchmarks/instructions.py --write-docs`"
                f" (`make bench-instructions`) · N = {n:,} and {small:,} events · valgrind cachegrind"
                f" (`--cache-sim=no`) · {m.get('cpu', '?')}, Python {sys.version.split()[0]} · strom"
                f" {m.get('commit', '?')}",
                "",
                "Instructions executed by the TaskManager processes per event, from two runs at N and N/10"
                " (start-up cancels out); each plain loop runs in a process of its own. Unlike events/s these"
                " counts do not drift with the machine; they do not see cache misses, GIL hand-overs or idle time.",
                "",
                "W1 as in the data-plane benchmarks (`from_sequence` → map(event) → map → filter → counting sink,"
                " all chained):",
                "",
                md_table(w1_header, w1_rows(w1)),
                "",
                "W2 as in the window benchmarks (1 s tumbling event-time windows per key, the peers' generator and"
                " interleave):",
                "",
                md_table(header, rows),
                "",
                f"Scaling bound on two cores: 2 / {w2['p=2'] / w2['p=1']:.3f} = **{bound:.2f} × p=1** — what p=2"
                " would reach if both TaskManagers were always busy and ran as many instructions per second as the"
                " one at p=1.",
                SECTION_END,
            ]
        )
        DOCS.write_text(splice_section(DOCS.read_text(), section, SECTION_BEGIN, SECTION_END))
        log(f"wrote {DOCS}")


if __name__ == "__main__":
    main()
