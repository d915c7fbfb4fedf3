"""Start-up of a tiny job (issue 33): ``from_collection`` of 10 elements → map → print on the embedded MiniCluster.

    python benchmarks/startup.py [--rounds 8] [--baseline DIR]

Each round runs the job as ``strom run --startup-split`` in a fresh interpreter and takes its wall time from outside
(from before the process starts to its exit) and the split the client reports (interpreter and imports, program,
cluster, deploy to every task RUNNING, run, shutdown); the rest of the wall time is the interpreter's exit. Also
``python -X importtime -c "import strom"`` and the import of the DataStream environment. With ``--baseline DIR``
(a checkout of another commit) the two run in turn, A B A B …, so that a drifting machine moves both.
Prints medians in milliseconds. Bytecode caches go to a temporary directory (as an installed package has them).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

JOB = textwrap.dedent(
    """
    from strom.datastream import StreamExecutionEnvironment

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.from_collection(list(range(10))).map(lambda x: x * 2).print()
    env.execute("tiny")
    """
)
PHASES = ("interpreter and strom's imports", "program", "cluster", "deploy", "run", "shutdown", "total")
ROOT = Path(__file__).resolve().parent.parent


def _env(checkout: Path, pycache: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(checkout), "PYTHONPYCACHEPREFIX": pycache}


def run_job(checkout: Path, script: Path, pycache: str) -> dict[str, float]:
    """One run: its wall time and the phases of its split, in ms."""
    split = ["--startup-split"] if (checkout / "strom" / "client" / "startup_split.py").exists() else []  # older
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "strom.cli", "run", *split, str(script)],
        capture_output=True,
        text=True,
        env=_env(checkout, pycache),
        cwd=script.parent,
        timeout=120,
    )
    wall = (time.perf_counter() - start) * 1000
    if done.returncode != 0 or done.stdout.split() != [str(2 * x) for x in range(10)]:
        raise SystemExit(f"the job failed ({done.returncode}): {done.stderr}")
    figures = {"wall": wall}
    for phase in PHASES:
        match = re.search(rf"{re.escape(phase)} ([0-9.]+) s", done.stderr)
        if match:
            figures[phase] = float(match.group(1)) * 1000
    figures["exit"] = wall - figures.get("total", wall)
    return figures


def import_time(checkout: Path, statement: str, pycache: str) -> float:
    """``-X importtime``'s cumulative figure of the statement's top-level imports, in ms."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", statement],
        capture_output=True,
        text=True,
        env=_env(checkout, pycache),
        cwd=tempfile.gettempdir(),
        check=True,
    )
    rows = re.findall(r"import time:\s+\d+ \|\s+(\d+) \| (\S.*)", done.stderr)
    return sum(int(cumulative) for cumulative, name in rows if not name.startswith(" ")) / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--baseline", type=Path, help="a checkout of the commit to compare with")
    ns = parser.parse_args()
    checkouts = {"A": ROOT} | ({"B": ns.baseline.resolve()} if ns.baseline else {})
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "tiny_job.py"
        script.write_text(JOB)
        pycache = str(Path(tmp) / "pycache")
        results: dict[str, list[dict[str, float]]] = {name: [] for name in checkouts}
        imports: dict[str, list[tuple[float, float]]] = {name: [] for name in checkouts}
        for checkout in checkouts.values():  # a warm-up run each (writes the bytecode caches)
            run_job(checkout, script, pycache)
        for _ in range(ns.rounds):
            for name, checkout in checkouts.items():
                results[name].append(run_job(checkout, script, pycache))
                strom = import_time(checkout, "import strom", pycache)
                environment = import_time(checkout, "from strom.datastream import StreamExecutionEnvironment", pycache)
                imports[name].append((strom, environment))
    print(f"load average {os.getloadavg()[0]:.2f} / {os.getloadavg()[1]:.2f} / {os.getloadavg()[2]:.2f}")
    for name, checkout in checkouts.items():
        runs = results[name]
        med = {k: statistics.median(r[k] for r in runs if k in r) for k in runs[0]}
        split = " · ".join(f"{k} {med[k]:.0f}" for k in (*PHASES, "exit") if k in med)
        strom_ms = statistics.median(i[0] for i in imports[name])
        env_ms = statistics.median(i[1] for i in imports[name])
        print(f"{name} {checkout}: wall {med['wall']:.0f} ms (median of {len(runs)}); {split}")
        print(f"{name} import strom {strom_ms:.0f} ms, the DataStream environment {env_ms:.0f} ms (-X importtime)")
    if ns.baseline:
        ratios = [a["wall"] / b["wall"] for a, b in zip(results["A"], results["B"], strict=True)]
        print(f"A/B wall, pair by pair: median {statistics.median(ratios):.2f} (min {min(ratios):.2f})")


if __name__ == "__main__":
    main()
