"""A/B of two checkouts of strom in paired rounds: the same benchmark run alternately on each, the order switched
every round, and each run's figure taken against the plain-Python reference of that same run — so a drift in the
machine's speed cancels within a pair. Reports, per figure, the median of the per-round ratios B/A (> 1: B faster).

    python benchmarks/ab.py --a ../strom-before --b . --suite bench --rounds 5     # W1/W2 at p=1 and p=2
    python benchmarks/ab.py --a ../strom-before --b . --suite windows --rounds 6   # W2/W3 event-time windows

Each checkout runs its own ``benchmarks/`` with ``PYTHONPATH`` set to it (its TaskManagers inherit that), under this
interpreter. ``git worktree add --detach ../strom-before <commit>`` gives a checkout of an older commit.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

_WINDOWS_ROW = re.compile(r"^(W[23])\s+strom (p=\d)\s+[\d,]+ \([^)]*\)\s+([\d.]+) \(")


def _run(tree: Path, args: list[str]) -> str:
    env = dict(os.environ, PYTHONPATH=str(tree))
    done = subprocess.run(
        [sys.executable, *args], cwd=tree, env=env, capture_output=True, text=True, timeout=1800, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"expected {args[0]} in {tree} to succeed; got exit code {done.returncode}:\n{done.stderr}")
    return done.stdout


def bench_figures(tree: Path) -> dict[str, float]:
    """W1/W2 at p=1 and p=2 of ``benchmarks/bench.py``, each as (plain-loop job time / strom job time)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.json"
        _run(
            tree,
            ["benchmarks/bench.py", "--only", "w1,w2", "--parallelism", "1,2", "--repeat", "1", "--json", str(path)],
        )
        series = {(s["workload"], s["config"]): s for s in json.loads(path.read_text())["series"]}
    figures = {}
    for workload in ("W1", "W2"):
        ceiling = series[(workload, "ceiling")]["job_s"][0]
        for config in ("p=1", "p=2"):
            s = series[(workload, config)]
            if s["errors"] or s["wrong"]:
                raise SystemExit(
                    f"expected {workload} {config} in {tree} to run correctly; got {s['errors'] or s['wrong']}"
                )
            figures[f"{workload} {config}"] = ceiling / s["job_s"][0]
    return figures


def windows_figures(tree: Path) -> dict[str, float]:
    """W2/W3 at p=1 and p=2 of ``benchmarks/windows.py``, each as its '× plain loop' (checksums checked there)."""
    text = _run(tree, ["benchmarks/windows.py", "--n", "1000000", "--repeat", "1"])
    figures = {f"{m[1]} {m[2]}": float(m[3]) for line in text.splitlines() if (m := _WINDOWS_ROW.match(line))}
    if len(figures) != 4 or "checksum differs" in text:
        raise SystemExit(f"expected four equal-checksum figures from windows.py in {tree}; got:\n{text}")
    return figures


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--a", type=Path, required=True, help="the checkout to compare against (before)")
    p.add_argument("--b", type=Path, required=True, help="the checkout measured (after)")
    p.add_argument("--suite", choices=("bench", "windows"), default="bench")
    p.add_argument("--rounds", type=int, default=5)
    a = p.parse_args()
    measure = bench_figures if a.suite == "bench" else windows_figures
    runs: dict[str, list[dict[str, float]]] = {"A": [], "B": []}
    trees = {"A": a.a.resolve(), "B": a.b.resolve()}
    for r in range(a.rounds):
        for name in ("A", "B") if r % 2 == 0 else ("B", "A"):
            runs[name].append(measure(trees[name]))
            print(f"round {r + 1} {name}: " + ", ".join(f"{k} {v:.3f}" for k, v in runs[name][-1].items()), flush=True)
    print(f"\nB/A per figure (each run against its own plain-loop reference), {a.rounds} paired rounds:")
    for key in runs["A"][0]:
        ratios = [b[key] / x[key] for b, x in zip(runs["B"], runs["A"], strict=True)]
        of_a = statistics.median(x[key] for x in runs["A"])
        of_b = statistics.median(b[key] for b in runs["B"])
        spread = f"{min(ratios):.3f}-{max(ratios):.3f}"
        print(f"  {key}: {statistics.median(ratios):.3f} ({spread}); A {of_a:.2f}, B {of_b:.2f} of the plain loop")


if __name__ == "__main__":
    main()
