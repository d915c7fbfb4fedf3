"""The JobManager's memory over thousands of checkpoints: a standalone cluster (a JobManager process, one TaskManager)
runs a keyed job checkpointing as fast as it can (every 10 ms, no pause) while a poller GETs what the dashboard's
checkpoint tab reads (``/jobs/:id/checkpoints``, ``/jobs/:id/exceptions``) every second; the JobManager's RSS and the
size of the checkpoints answer are sampled every 250 completed checkpoints.

    python benchmarks/jobmanager_soak.py                   # 3000 checkpoints
    python benchmarks/jobmanager_soak.py --checkpoints 500 # smoke run
    python benchmarks/jobmanager_soak.py --write-docs      # ... and its section of docs/benchmarks.md

Flat means: after a warm-up (the first 500 checkpoints: caches, the statistics history filling up to
``web.checkpoints.history``), the RSS grows by less than 1 MB per 1000 checkpoints (a least-squares slope over the
samples) and the checkpoints answer stays the same size.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import psutil
from bench import DOCS, log, machine, md_table, splice_section

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from soak_job import JOB

SECTION_BEGIN = "<!-- jobmanager-soak:begin -->"
SECTION_END = "<!-- jobmanager-soak:end -->"
WARM_UP = 500
SAMPLE_EVERY = 250
FLAT_BYTES_PER_1000 = 1 << 20


def _get(url: str) -> tuple[Any, int]:
    with urllib.request.urlopen(url, timeout=30) as resp:
        body = resp.read()
    return json.loads(body), len(body)


def soak(checkpoints: int) -> list[dict[str, float]]:
    samples: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="strom-soak-") as tmp_name:
        tmp = Path(tmp_name)
        cluster = tmp / "cluster"
        env = dict(os.environ, STROM_CLUSTER_DIR=str(cluster))

        def strom(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
            cmd = [sys.executable, "-m", "strom.cli", *args]
            return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)

        started = strom("cluster", "start", "--taskmanagers", "1", "-D", "rest.port=0", "-D", "jobmanager.rpc.port=0")
        assert started.returncode == 0, started.stderr
        try:
            addresses = json.loads((cluster / "jobmanager.json").read_text())
            rest, jm = addresses["rest_url"], psutil.Process(int(addresses["pid"]))
            (tmp / "job.py").write_text(JOB)
            run = strom("run", "-m", rest.removeprefix("http://"), "-d", str(tmp / "job.py"), str(tmp / "checkpoints"))
            assert run.returncode == 0, run.stderr
            job_id = run.stdout.split("JobID ")[1].split()[0]
            t0 = time.monotonic()
            next_sample = SAMPLE_EVERY
            while True:
                stats, size = _get(f"{rest}/jobs/{job_id}/checkpoints")
                _get(f"{rest}/jobs/{job_id}/exceptions")
                completed = int(stats["counts"]["completed"])
                if completed >= next_sample:
                    sample = {
                        "checkpoints": float(completed),
                        "rss": float(jm.memory_info().rss),
                        "answer_bytes": float(size),
                        "seconds": time.monotonic() - t0,
                    }
                    samples.append(sample)
                    log(f"{completed} checkpoints: JobManager RSS {sample['rss'] / 2**20:.1f} MiB, answer {size} B")
                    next_sample += SAMPLE_EVERY
                if completed >= checkpoints:
                    return samples
                time.sleep(1.0)
        finally:
            with contextlib.suppress(Exception):
                strom("cluster", "stop", timeout=60)


def slope(samples: list[dict[str, float]]) -> float:
    """Least-squares RSS bytes per 1000 checkpoints over the samples after the warm-up."""
    after = [s for s in samples if s["checkpoints"] >= WARM_UP]
    xs, ys = [s["checkpoints"] for s in after], [s["rss"] for s in after]
    if len(xs) < 2:
        return float("nan")
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return 1000 * sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--checkpoints", type=int, default=3000)
    ap.add_argument("--write-docs", action="store_true")
    a = ap.parse_args(argv)
    load_before = os.getloadavg()
    samples = soak(a.checkpoints)
    load_after = os.getloadavg()
    per_1000 = slope(samples)
    sizes = {int(s["answer_bytes"]) for s in samples if s["checkpoints"] >= WARM_UP}
    flat = per_1000 < FLAT_BYTES_PER_1000
    rate = samples[-1]["checkpoints"] / samples[-1]["seconds"]
    verdict = (
        f"RSS slope after {WARM_UP} checkpoints: {per_1000 / 2**10:+.0f} KiB per 1000 checkpoints "
        f"({'flat' if flat else 'GROWING'}); checkpoints answer {min(sizes)}–{max(sizes)} bytes; {rate:.1f} "
        f"checkpoints/s"
    )
    print(verdict)
    if a.write_docs:
        info = machine()
        rows = [
            [f"{int(s['checkpoints'])}", f"{s['rss'] / 2**20:.1f} MiB", f"{int(s['answer_bytes'])} B"] for s in samples
        ]
        load = f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after"
        section = "\n".join(
            [
                SECTION_BEGIN,
                "## JobManager memory over thousands of checkpoints",
                "",
                f"`python benchmarks/jobmanager_soak.py --checkpoints {a.checkpoints}` on "
                f"{dt.date.today().isoformat()}, {info.get('cpu', '?')}; {load}. A standalone cluster (the JobManager "
                "in its own process, one TaskManager) runs a keyed job checkpointing every 10 ms without pause while "
                "a poller reads the dashboard's checkpoint and exception answers every second.",
                "",
                f"**{verdict}** — the goal: under 1 MiB per 1000 checkpoints after a warm-up of {WARM_UP} "
                f"(`web.checkpoints.history` 10 keeps the statistics bounded).",
                "",
                md_table(["completed checkpoints", "JobManager RSS", "GET /jobs/:id/checkpoints"], rows),
                "",
                SECTION_END,
            ]
        )
        DOCS.write_text(splice_section(DOCS.read_text(), section, SECTION_BEGIN, SECTION_END))
        log(f"wrote its section of {DOCS}")


if __name__ == "__main__":
    main()
