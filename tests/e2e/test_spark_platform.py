"""End to end on a Spark standalone cluster, as a user of the platform runs it: a Spark Parquet table of events →
``strom run --target spark`` → keyed event-time windows → a Spark table, read back by another Spark application
with ``spark.table(...)``, equals a Spark batch query computing the same windows — with two TaskManagers SIGKILLed
while the job runs, and no row twice."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import psutil
import pytest
from spark_cluster import SparkStandaloneCluster
from spark_platform import platform_settings

pytestmark = [pytest.mark.slow, pytest.mark.spark]

PLATFORM = Path(__file__).with_name("spark_platform.py")


def spark_app(step: str, master: str, directory: Path, settings: dict[str, str]) -> list[list[object]]:
    """Run one step of the platform as its own Spark application; its JSON output."""
    args = [f"{k}={v}" for k, v in settings.items()]
    proc = subprocess.run(
        [sys.executable, str(PLATFORM), step, master, str(directory), *args],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows: list[list[object]] = json.loads((directory / f"{step}.json").read_text())
    return rows


def latest_checkpoint(directory: Path) -> int:
    """The newest completed checkpoint's id (the storage keeps only the newest: ids tell the progress)."""
    return max((int(m.parent.name[4:]) for m in directory.glob("*/chk-*/_metadata")), default=0)


def task_manager_pids(cluster: SparkStandaloneCluster) -> list[int]:
    """The strom TaskManagers: Python workers forked by an executor's PySpark daemon, below one of the cluster's
    workers, that listen on a port (the TaskManager's data plane; Spark's own Python workers do not)."""
    pids = []
    for p in psutil.process_iter(["pid", "cmdline"]):
        try:
            if "pyspark.daemon" not in (p.info["cmdline"] or []):
                continue
            parent = p.parent()
            if parent is None or "pyspark.daemon" not in parent.cmdline() or cluster.worker_of(p.pid) is None:
                continue
            if any(c.status == psutil.CONN_LISTEN for c in p.net_connections("tcp")):
                pids.append(p.pid)
        except psutil.Error:
            continue
    return pids


def kill_task_managers_while_it_runs(
    job: subprocess.Popen[bytes], cluster: SparkStandaloneCluster, checkpoints: Path, kills: int
) -> list[int]:
    """``kills`` times: once two checkpoints completed since the last kill (the restarted job runs fully again),
    SIGKILL one of the two TaskManagers."""
    rng = random.Random(19)
    killed: list[int] = []
    since = 0
    deadline = time.monotonic() + 240
    while len(killed) < kills:
        latest = latest_checkpoint(checkpoints)
        tms = [p for p in task_manager_pids(cluster) if p not in killed]
        state = f"after {len(killed)} kills (TaskManagers {tms}, checkpoint {latest})"
        assert job.poll() is None, f"the job ended {state}; give it more to read"
        assert time.monotonic() < deadline, f"no new checkpoint {state}"
        if latest >= since + 2 and len(tms) == 2:
            victim = rng.choice(tms)
            psutil.Process(victim).send_signal(signal.SIGKILL)
            killed.append(victim)
            since = latest
        time.sleep(0.1)
    return killed


@pytest.mark.timeout(900)
def test_a_spark_table_through_strom_on_spark_equals_sparks_batch_windows_with_task_managers_killed_twice(
    spark_standalone: SparkStandaloneCluster, tmp_path: Path
) -> None:
    cluster = spark_standalone
    app = cluster.spark_settings(executor_cores=2, max_cores=4)
    master = app.pop("spark.master")
    reference = spark_app("prepare", master, tmp_path, app)
    assert len(reference) > 2000

    strom = Path(sys.executable).with_name("strom")
    config = {
        **app,
        **platform_settings(str(tmp_path)),
        "execution.checkpointing.interval": "300 ms",
        "execution.checkpointing.dir": str(tmp_path / "checkpoints"),  # every executor reaches this directory
        "heartbeat.interval": "250 ms",
        "heartbeat.timeout": "2 s",
        "restart-strategy.type": "fixed-delay",
        "restart-strategy.fixed-delay.attempts": "10",
        "restart-strategy.fixed-delay.delay": "200 ms",
    }
    defines = [arg for key, value in config.items() for arg in ("-D", f"{key}={value}")]
    log = tmp_path / "job.log"
    with (
        log.open("wb") as out,
        subprocess.Popen(
            [str(strom), "run", "--target", "spark", "--spark-master", master, *defines, str(PLATFORM), "job", "20"],
            cwd=tmp_path,
            stdout=out,
            stderr=subprocess.STDOUT,
        ) as job,
    ):
        try:
            killed = kill_task_managers_while_it_runs(job, cluster, tmp_path / "checkpoints", kills=2)
            job.wait(timeout=400)
        finally:
            if job.poll() is None:
                job.kill()
                job.wait()
    err = log.read_text(errors="replace")
    assert job.returncode == 0, err[-4000:]
    assert len(killed) == 2
    assert "restart #2" in err, "expected the job to fail over twice"

    table = spark_app("read", master, tmp_path, app)
    duplicates = [row for row, n in Counter(json.dumps(r) for r in table).items() if n > 1]
    assert duplicates == [], f"rows in the table twice: {duplicates[:5]}"
    assert table == reference
