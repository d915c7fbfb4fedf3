"""A standalone session cluster run as a user runs it (``strom cluster start``), for the e2e tests: the CLI, REST
reads, the cluster's processes, and a job program submitted with ``strom run -m``. Importable from every test
directory (``pythonpath`` in pyproject.toml).

Every process runs in its own session under a temporary cluster directory; ports are 0 (the JobManager writes the
ports it bound into ``jobmanager.json``), so nothing races for a port. :func:`running_cluster` kills every process
it saw, even when the test failed. Waits poll for a condition; their deadlines only turn a hang into a failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil

__all__ = [
    "HELPER",
    "SUMS_JOB",
    "Cluster",
    "cluster_pids",
    "committed",
    "expected_sums",
    "get",
    "running_cluster",
    "strom",
    "wait_for",
    "write_sums_job",
]

HELPER = textwrap.dedent(
    """
    def key_of(i):
        return i % 7
    """
)

#: ``sums.py OUT CHECKPOINTS COUNT RATE [NAME]``: records ``(i % 7, i)`` for i < COUNT at RATE per second, summed
#: per key, every running sum written by the exactly-once FileSink
SUMS_JOB = textwrap.dedent(
    """
    import sys
    from helpers import key_of   # shipped to the cluster with the job (a module next to the program)
    from strom import CheckpointingMode, DataGeneratorSource, FileSink, JsonLinesEncoder, StreamExecutionEnvironment
    from strom.connectors.file_system import RollingPolicy

    out, checkpoints, count, rate = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    name = sys.argv[5] if len(sys.argv) > 5 else "sums"
    env = StreamExecutionEnvironment.get_execution_environment()
    env.enable_checkpointing(200, CheckpointingMode.EXACTLY_ONCE)
    env.get_checkpoint_config().set_checkpoint_storage("file://" + checkpoints)
    (
        env.from_source(DataGeneratorSource(lambda i: (key_of(i), i), count, records_per_second=rate), None, "gen")
        .uid("gen")
        .key_by(lambda e: e[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1])).uid("sums")
        .sink_to(
            FileSink.for_row_format(out, JsonLinesEncoder())
            .with_rolling_policy(RollingPolicy.on_checkpoint_rolling_policy())  # committed at every checkpoint
            .build()
        ).uid("files")
    )
    env.execute(name)
    """
)


def write_sums_job(directory: Path) -> Path:
    """``SUMS_JOB`` as ``directory/sums.py`` with its ``helpers.py`` next to it; the program's path."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "helpers.py").write_text(HELPER)
    job = directory / "sums.py"
    job.write_text(SUMS_JOB)
    return job


def expected_sums(count: int) -> dict[int, int]:
    """What SUMS_JOB's last running sum per key is once every record was summed exactly once."""
    return {k: sum(i for i in range(count) if i % 7 == k) for k in range(7)}


def strom(cluster_dir: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``strom ARGS`` with ``cluster_dir`` as its cluster directory."""
    env = dict(os.environ, STROM_CLUSTER_DIR=str(cluster_dir))
    return subprocess.run(
        [sys.executable, "-m", "strom.cli", *args], capture_output=True, text=True, timeout=timeout, env=env
    )


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.loads(resp.read())


def http_get(url: str) -> tuple[int, bytes]:
    """``GET url``: the status and body, also of an error answer."""
    try:
        with urllib.request.urlopen(url, timeout=30) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def wait_for(what: str, condition: Callable[[], Any], timeout: float = 90.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.1)


def committed(out: Path) -> list[list[int]]:
    """Every row the FileSink committed under ``out`` (hidden in-progress files left out)."""
    rows = []
    for f in out.rglob("*"):
        if f.is_file() and not f.name.startswith("."):
            rows += [json.loads(line) for line in f.read_text().splitlines() if line]
    return rows


def cluster_pids(cluster_dir: Path) -> list[int]:
    return [int(p.read_text()) for p in cluster_dir.glob("*.pid")]


class Cluster:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.extra: list[subprocess.Popen[bytes]] = []
        self.seen_pids: set[int] = set()

    @property
    def rest_url(self) -> str:
        return str(json.loads((self.directory / "jobmanager.json").read_text())["rest_url"])

    @property
    def m(self) -> str:
        return self.rest_url.removeprefix("http://")

    def strom(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return strom(self.directory, *args, timeout=timeout)

    def get(self, path: str) -> Any:
        return get(self.rest_url + path)

    def remember_pids(self) -> None:
        self.seen_pids.update(cluster_pids(self.directory))

    def job_states(self) -> dict[str, str]:
        return {j["jid"]: j["state"] for j in self.get("/jobs/overview")["jobs"]}

    def task_managers(self) -> list[dict[str, Any]]:
        return list(self.get("/taskmanagers")["taskmanagers"])


#: a cluster whose lost TaskManagers are noticed within seconds
DEFAULT_OPTIONS = ("taskmanager.numberOfTaskSlots=2", "heartbeat.interval=500", "heartbeat.timeout=5000")


@contextlib.contextmanager
def running_cluster(
    directory: Path,
    *options: str,
    taskmanagers: int = 2,
    jobmanagers: int = 1,
    defaults: bool = True,
    args: tuple[str, ...] = (),
) -> Iterator[Cluster]:
    """``strom cluster start --taskmanagers N --jobmanagers M`` with free ports and ``DEFAULT_OPTIONS`` (unless not
    ``defaults``), ``options`` (``key=value``) and ``args``; on exit ``strom cluster stop``, then SIGKILL to every
    process it saw (and ``Cluster.extra``), whatever happened."""
    c = Cluster(directory)
    preset = ("rest.port=0", "jobmanager.rpc.port=0", *DEFAULT_OPTIONS) if defaults else ()
    dashes = [a for o in (*preset, *options) for a in ("-D", o)]
    try:
        counts = ("--taskmanagers", str(taskmanagers), "--jobmanagers", str(jobmanagers))
        started = strom(directory, "cluster", "start", *counts, *args, *dashes)
        c.remember_pids()
        assert started.returncode == 0, started.stdout + started.stderr
        yield c
    finally:
        c.remember_pids()
        with contextlib.suppress(Exception):
            strom(directory, "cluster", "stop")
        procs = []
        for pid in c.seen_pids | {p.pid for p in c.extra}:
            with contextlib.suppress(psutil.Error):
                proc = psutil.Process(pid)
                proc.kill()
                procs.append(proc)
        psutil.wait_procs(procs, timeout=10)
        for p in c.extra:
            with contextlib.suppress(Exception):
                p.wait(timeout=10)
