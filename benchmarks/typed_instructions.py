"""What declared types cost in CPU instructions (valgrind): W1 and W2 typed and untyped at p=1, W2 at p=2.

    python benchmarks/typed_instructions.py                       # N = 60k, strom of this checkout
    python benchmarks/typed_instructions.py --strom /work/main    # the same jobs on another checkout's strom
    python benchmarks/typed_instructions.py --write-docs          # ... into its part of docs/benchmarks.md

Wall-clock rates on a shared machine say little (``benchmarks/typed.py`` measures those); instructions do not drift.
Each configuration runs at N and N/10 events under cachegrind (``benchmarks/instructions.py``'s harness) and the
difference divided by the difference in events is the TaskManagers' work per event. The jobs are
``benchmarks/typed.py``'s; ``--strom`` runs them on the strom package of another checkout (its root first on
``PYTHONPATH``), so that one run compares two versions on equal terms.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import tempfile
from pathlib import Path

import instructions
from bench import DOCS, ROOT, log, machine, md_table, splice_section
from instructions import count, per_event, task_managers

BEGIN = "<!-- typed-instructions:begin -->"
END = "<!-- typed-instructions:end -->"

JOB = """
import sys, tempfile
sys.path.insert(0, {bench!r})
import typed
SLOW = {{"taskmanager.registration.timeout": "900 s", "heartbeat.timeout": "900 s"}}  # valgrind starts slowly
with tempfile.TemporaryDirectory() as d:
    r = typed.run_{w}({n}, d, {typed}, 3600, parallelism={p}, config=SLOW)
print(r.result)
"""

#: (workload, typed, parallelism)
CONFIGS = [("w1", False, 1), ("w1", True, 1), ("w2", False, 1), ("w2", True, 1), ("w2", False, 2), ("w2", True, 2)]


def measure(n: int, small: int, base: Path) -> dict[tuple[str, bool, int], float]:
    bench = str(ROOT / "benchmarks")
    per: dict[tuple[str, bool, int], float] = {}
    for w, typed, p in CONFIGS:
        name = f"{w}-{'typed' if typed else 'untyped'}-p{p}"
        big = count(JOB.format(bench=bench, w=w, n=n, typed=typed, p=p), base / f"{name}-big")
        little = count(JOB.format(bench=bench, w=w, n=small, typed=typed, p=p), base / f"{name}-small")
        per[(w, typed, p)] = per_event(n, small, task_managers(big), task_managers(little))
        log(f"{name}: {per[(w, typed, p)]:,.0f} instructions/event (TaskManagers)")
    return per


def table(per: dict[tuple[str, bool, int], float]) -> str:
    rows = []
    for w in ("w1", "w2"):
        u, t = per[(w, False, 1)], per[(w, True, 1)]
        rows.append([f"{w.upper()} p=1", f"{u:,.0f}", f"{t:,.0f}", f"{u / t:.2f}", "", ""])
    u2, t2 = per[("w2", False, 2)], per[("w2", True, 2)]
    u1, t1 = per[("w2", False, 1)], per[("w2", True, 1)]
    rows.append(["W2 p=2", f"{u2:,.0f}", f"{t2:,.0f}", f"{u2 / t2:.2f}", f"{u2 / u1:.2f}", f"{t2 / t1:.2f}"])
    header = ["job", "untyped instr/event", "typed instr/event", "typed/untyped (speed)"]
    header += ["untyped p2/p1", "typed p2/p1"]
    return md_table(header, rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=60_000)
    ap.add_argument("--strom", help="the checkout whose strom package runs the jobs (default: this one)")
    ap.add_argument("--write-docs", action="store_true")
    a = ap.parse_args(argv)
    if a.strom:  # its strom first on the path, and the processes' working directory (``-c`` and ``-m`` put it first)
        os.environ["PYTHONPATH"] = os.pathsep.join([a.strom, os.environ.get("PYTHONPATH", "")])
        instructions.ROOT = Path(a.strom)
    with tempfile.TemporaryDirectory(prefix="strom-typed-instr-") as d:
        per = measure(a.n, a.n // 10, Path(d))
    text = table(per)
    print(text)
    if a.write_docs:
        m = machine()
        section = "\n".join(
            [
                BEGIN,
                f"Instructions per event (valgrind, TaskManagers only), measured {dt.date.today().isoformat()}, commit "
                f"{m['commit']}, strom of {a.strom or 'this checkout'}; `python benchmarks/typed_instructions.py "
                f"--n {a.n}` (N and N/10 events per configuration). The speed ratio "
                "is untyped ÷ typed instructions (above 1: typed does less work).",
                "",
                text,
                END,
            ]
        )
        DOCS.write_text(splice_section(DOCS.read_text(), section, BEGIN, END))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
