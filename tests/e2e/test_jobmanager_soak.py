"""The JobManager's memory stays flat over thousands of checkpoints (issue 31 §1): a standalone cluster's JobManager
(a process of its own) runs a keyed job checkpointing as fast as it can while the test reads the dashboard's
checkpoint answer every half second. Bounded statistics (``web.checkpoints.history``) keep both the answer and the
process's RSS from growing with the number of checkpoints — an unbounded history grew ~6 KB per checkpoint.
``benchmarks/jobmanager_soak.py`` runs the same at 4000 checkpoints and reports the slope."""

from __future__ import annotations

import json
import time
from pathlib import Path

import psutil
import pytest
from soak_job import JOB
from standalone_cluster import Cluster, running_cluster, wait_for

pytestmark = pytest.mark.slow

WARM_UP = 500
CHECKPOINTS = 2500


def _completed(cluster: Cluster, job_id: str) -> tuple[int, int]:
    """The completed checkpoints and the size of the answer (bytes of its JSON)."""
    stats = cluster.get(f"/jobs/{job_id}/checkpoints")
    return int(stats["counts"]["completed"]), len(json.dumps(stats))


@pytest.mark.timeout(600)
def test_job_manager_memory_and_checkpoint_answer_stay_flat_over_thousands_of_checkpoints(tmp_path: Path) -> None:
    with running_cluster(tmp_path / "cluster", taskmanagers=1) as cluster:
        job = tmp_path / "soak.py"
        job.write_text(JOB)
        run = cluster.strom("run", "-m", cluster.m, "-d", str(job), str(tmp_path / "checkpoints"))
        assert run.returncode == 0, run.stdout + run.stderr
        job_id = run.stdout.split("Job has been submitted with JobID ")[1].split()[0]
        jm = psutil.Process(int(json.loads((cluster.directory / "jobmanager.json").read_text())["pid"]))
        wait_for("the warm-up checkpoints", lambda: _completed(cluster, job_id)[0] >= WARM_UP, 300)
        rss_after_warm_up = jm.memory_info().rss
        sizes = []
        while (done := _completed(cluster, job_id))[0] < CHECKPOINTS:
            sizes.append(done[1])
            time.sleep(0.5)
        grown = jm.memory_info().rss - rss_after_warm_up
        assert grown < 3 << 20, f"JobManager RSS grew {grown / 2**20:.1f} MiB over {done[0] - WARM_UP} checkpoints"
        assert max(sizes) - min(sizes) < 1024, (min(sizes), max(sizes))  # ten checkpoints' statistics, whatever ids
