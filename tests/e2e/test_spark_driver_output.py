"""strom on Spark as a user meets it from the command line: ``print()`` output on the driver's standard output
(not on its standard error between Spark's progress bars), a TaskManager Python that cannot import strom named at
once with the hint alone, and a program run by an unactivated venv's Python (``python3`` on ``PATH`` being another
one) whose TaskManagers run that same Python. TaskManagers in Spark tasks write log files and serve Prometheus
endpoints as standalone ones do."""

from __future__ import annotations

import json
import logging
import os
import random
import re
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from standalone_cluster import http_get

from strom import Configuration, DataGeneratorSource, StreamExecutionEnvironment
from strom.api.functions import MapFunction, RuntimeContext
from strom.deploy.spark.session import create_session

pytestmark = [pytest.mark.slow, pytest.mark.spark]

STROM = str(Path(sys.executable).with_name("strom"))

PRINTING_JOB = """
from strom import StreamExecutionEnvironment
env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(2)
env.from_collection(list(range(6))).map(lambda x: x * 10).print()
env.execute("printing")
print("done")
"""

OWN_SESSION_JOB = """
from pyspark.sql import SparkSession
from strom import Configuration, StreamExecutionEnvironment
spark = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
env = StreamExecutionEnvironment.get_execution_environment(Configuration({"execution.target": "spark"}), spark=spark)
env.set_parallelism(2)
env.from_collection([1, 2, 3]).map(lambda x: x * 10).print()
env.execute("own session")
spark.stop()
"""


def run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=280, env=env)


@pytest.mark.timeout(300)
def test_print_output_lands_on_the_driver_s_stdout_without_progress_bars(tmp_path: Path) -> None:
    (tmp_path / "job.py").write_text(PRINTING_JOB)
    proc = run([STROM, "run", "--target", "spark", "--spark-master", "local[2]", "job.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    *printed, last = proc.stdout.splitlines()
    assert all(re.fullmatch(r"[12]> \d+", ln) for ln in printed), proc.stdout
    assert sorted(int(ln.split("> ")[1]) for ln in printed) == list(range(0, 60, 10)), proc.stdout
    assert last == "done"  # the job's lines are out before execute() returns
    assert "> " not in proc.stderr and "[Stage " not in proc.stderr, proc.stderr[-3000:]


@pytest.mark.timeout(300)
def test_a_task_manager_python_without_strom_fails_the_start_at_once_with_the_hint_alone(tmp_path: Path) -> None:
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\necho \"ModuleNotFoundError: No module named 'strom'\" >&2\nexit 1\n")
    python.chmod(0o755)
    (tmp_path / "job.py").write_text(PRINTING_JOB)
    env = {**os.environ, "PYSPARK_PYTHON": str(python)}
    started = time.monotonic()
    proc = run([STROM, "run", "--target", "spark", "--spark-master", "local[2]", "job.py"], tmp_path, env)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert time.monotonic() - started < 120
    ours = [ln for ln in proc.stderr.splitlines() if ln.startswith("strom run:")]
    assert len(ours) == 1, proc.stderr[-3000:]
    assert f"expected the TaskManagers' Python to import strom; got {python}" in ours[0]
    assert "No module named 'strom'" in ours[0] and "hint: point PYSPARK_PYTHON" in ours[0]
    assert "\tat " not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr[-3000:]  # no Java, no Python


@pytest.mark.timeout(300)
def test_an_unactivated_venv_s_program_has_task_managers_on_its_own_python(tmp_path: Path) -> None:
    shadow = tmp_path / "bin"
    shadow.mkdir()
    other = shadow / "python3"  # the `python3` on PATH: not the venv's (as without `. .venv/bin/activate`)
    other.write_text("#!/bin/sh\necho \"ModuleNotFoundError: No module named 'strom'\" >&2\nexit 1\n")
    other.chmod(0o755)
    (tmp_path / "job.py").write_text(OWN_SESSION_JOB)
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "VIRTUAL_ENV")}
    env["PATH"] = os.pathsep.join([str(shadow), *os.environ["PATH"].split(os.pathsep)])
    proc = run([sys.executable, "job.py"], tmp_path, env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert sorted(ln.split("> ")[-1] for ln in proc.stdout.splitlines()) == ["10", "20", "30"], proc.stdout


class LogsAMarker(MapFunction[int, int]):
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def open(self, runtime_context: RuntimeContext) -> None:
        index = runtime_context.get_index_of_this_subtask()
        logging.getLogger("myjob.marker").info("%s from subtask %d", self.marker, index)

    def map(self, value: int) -> int:
        return value


def wait_for(what: str, condition: Callable[[], Any], timeout: float = 120.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.2)


@pytest.mark.timeout(300)
def test_task_managers_in_spark_tasks_write_log_files_and_serve_prometheus(tmp_path: Path) -> None:
    marker = f"marker-{uuid.uuid4().hex}"
    base = random.randrange(20000, 40000, 50)
    spark = create_session(Configuration({"spark.master": "local[2]"}), "strom-logs-and-metrics")
    try:
        config = {
            "execution.target": "spark",
            "logging.level": "INFO",
            "env.log.dir": str(tmp_path / "logs"),
            "metrics.reporter.prom.factory.class": "org.apache.flink.metrics.prometheus.PrometheusReporterFactory",
            "metrics.reporter.prom.port": f"{base}-{base + 49}",
        }
        env = StreamExecutionEnvironment.get_execution_environment(Configuration(config), spark=spark)
        env.set_parallelism(2)
        (
            env.from_source(DataGeneratorSource(lambda i: i, 10**12, records_per_second=100), source_name="numbers")
            .rebalance()
            .map(LogsAMarker(marker))
            .name("marker")
            .add_sink(lambda _: None)
        )
        client = env.execute_async("logs and metrics")
        try:
            urls = wait_for(
                "two TaskManager endpoints", lambda: len(client.get_metric_urls()) == 2 and client.get_metric_urls()
            )
            for tm_id, url in urls.items():  # an endpoint serves from its TaskManager's start, tasks' metrics later
                text = wait_for(f"{tm_id}'s task metrics", lambda url=url: _scrape_with_task_metrics(url))
                assert f'tm_id="{tm_id.replace("-", "_")}"' in text, text
            (directory,) = (tmp_path / "logs").iterdir()  # this cluster's own directory in env.log.dir
            rest = client.get_rest_url()
            job = json.loads(http_get(f"{rest}/jobs/{client.get_job_id()}")[1])
            (vertex,) = [v["id"] for v in job["vertices"] if "marker" in v["name"]]
            subtasks = json.loads(http_get(f"{rest}/jobs/{client.get_job_id()}/vertices/{vertex}")[1])["subtasks"]
            for subtask in subtasks:  # each map subtask's marker in the log of the TaskManager that ran it
                tm_id = subtask["taskmanager-id"]
                line = f"{marker} from subtask {subtask['subtask']}"
                log_file = directory / f"taskmanager-{tm_id}.log"
                wait_for(f"the marker in {log_file}", lambda f=log_file, m=line: f.exists() and m in f.read_text())
                status, body = http_get(f"{rest}/taskmanagers/{tm_id}/log")
                assert status == 200 and line in body.decode()
            for tm_id in urls:  # every TaskManager has its log file, and REST lists it
                listing = json.loads(http_get(f"{rest}/taskmanagers/{tm_id}/logs")[1])
                assert [f["name"] for f in listing["logs"]] == [f"taskmanager-{tm_id}.log"]
        finally:
            client.cancel()  # waits until the job stopped and its cluster closed
    finally:
        spark.stop()


def _scrape_with_task_metrics(url: str) -> str | None:
    with urllib.request.urlopen(url, timeout=10) as response:
        text: str = response.read().decode()
    return text if "flink_taskmanager_job_task_" in text else None
