"""Work per event, counted in CPU instructions: W2 at parallelism 1 and 2 and the plain loop, under valgrind.

    python benchmarks/instructions.py                # N = 200k, prints the table (~3 min)
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


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--write-docs", action="store_true")
    a = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        sys.exit("instructions.py: expected valgrind on the PATH; got none; hint: apt-get install valgrind")
    n, small = a.n, a.n // 10
    bench = str(ROOT / "benchmarks")
    per: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="strom-instr-") as tmp:
        base = Path(tmp)
        big = count(LOOP.format(bench=bench, n=n), base / "loop-big")
        little = count(LOOP.format(bench=bench, n=small), base / "loop-small")
        per["plain loop"] = per_event(n, small, client(big), client(little))
        log(f"plain loop: {per['plain loop']:,.0f} instructions/event")
        for name, p, split in (("p=1", 1, False), ("p=2", 2, False), ("split", 1, True)):
            big = count(JOB.format(bench=bench, n=n, p=p, split=split), base / f"{name}-big")
            little = count(JOB.format(bench=bench, n=small, p=p, split=split), base / f"{name}-small")
            per[name] = per_event(n, small, task_managers(big), task_managers(little))
            log(f"strom {name}: {per[name]:,.0f} instructions/event (TaskManagers)")
    loop, p1, p2, split1 = per["plain loop"], per["p=1"], per["p=2"], per["split"]
    rows = [
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
    header = ["W2 run", "instructions / event", "× plain loop", "× p=1"]
    print(text_table(header, rows))
    bound = 2 * p1 / p2
    print(f"scaling bound on 2 cores: 2 / {p2 / p1:.3f} = {bound:.2f} × p=1")
    if a.write_docs:
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
                "W2 as in the window benchmarks (1 s tumbling event-time windows per key, the peers' generator and"
                " interleave). Instructions executed by the TaskManager processes per event, from two runs at N and"
                " N/10 (start-up cancels out); the plain loop is `ref.py`'s in a process of its own. Unlike"
                " events/s these counts do not drift with the machine; they do not see cache misses, GIL"
                " hand-overs or idle time.",
                "",
                md_table(header, rows),
                "",
                f"Scaling bound on two cores: 2 / {p2 / p1:.3f} = **{bound:.2f} × p=1** — what p=2 would reach if"
                " both TaskManagers were always busy and ran as many instructions per second as the one at p=1.",
                SECTION_END,
            ]
        )
        DOCS.write_text(splice_section(DOCS.read_text(), section, SECTION_BEGIN, SECTION_END))
        log(f"wrote {DOCS}")


if __name__ == "__main__":
    main()
