"""A standalone session cluster run as a user runs it: ``strom cluster start``, jobs submitted with ``strom run -m``,
the CLI's ``list`` / ``savepoint`` / ``stop`` / ``cancel``, the REST API, TaskManagers that leave and join, and
``strom cluster stop`` leaving no process behind.

Every process runs in its own session under a temporary cluster directory; ports are 0 (the JobManager writes the
ports it bound into ``jobmanager.json``), so nothing races for a port. Waits poll for a condition; their deadlines
are only there to turn a hang into a failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

HELPER = textwrap.dedent(
    """
    def key_of(i):
        return i % 7
    """
)

SUMS_JOB = textwrap.dedent(
    """
    import sys
    from helpers import key_of   # shipped to the cluster with the job (a module next to the program)
    from strom import CheckpointingMode, DataGeneratorSource, FileSink, JsonLinesEncoder, StreamExecutionEnvironment

    out, checkpoints, count, rate = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    env = StreamExecutionEnvironment.get_execution_environment()
    env.enable_checkpointing(200, CheckpointingMode.EXACTLY_ONCE)
    env.get_checkpoint_config().set_checkpoint_storage("file://" + checkpoints)
    (
        env.from_source(DataGeneratorSource(lambda i: (key_of(i), i), count, records_per_second=rate), None, "gen")
        .uid("gen")
        .key_by(lambda e: e[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1])).uid("sums")
        .sink_to(FileSink.for_row_format(out, JsonLinesEncoder()).build()).uid("files")
    )
    env.execute("sums")
    """
)


class _Touch:
    """Unpickling it creates a file: proof that a body was (not) decoded."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (self.path, "w"))


def _strom(cluster_dir: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, STROM_CLUSTER_DIR=str(cluster_dir))
    return subprocess.run(
        [sys.executable, "-m", "strom.cli", *args], capture_output=True, text=True, timeout=timeout, env=env
    )


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.loads(resp.read())


def _wait_for(what: str, condition: Callable[[], Any], timeout: float = 90.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.1)


def _committed(out: Path) -> list[list[int]]:
    rows = []
    for f in out.rglob("*"):
        if f.is_file() and not f.name.startswith("."):
            rows += [json.loads(line) for line in f.read_text().splitlines() if line]
    return rows


def _cluster_pids(cluster_dir: Path) -> list[int]:
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

    def remember_pids(self) -> None:
        self.seen_pids.update(_cluster_pids(self.directory))

    def job_states(self) -> dict[str, str]:
        return {j["jid"]: j["state"] for j in _get(self.rest_url + "/jobs/overview")["jobs"]}

    def task_managers(self) -> list[dict[str, Any]]:
        return list(_get(self.rest_url + "/taskmanagers")["taskmanagers"])


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    directory = tmp_path / "cluster"
    c = Cluster(directory)
    started = _strom(
        directory,
        "cluster", "start", "--taskmanagers", "2",
        "-D", "rest.port=0", "-D", "jobmanager.rpc.port=0", "-D", "taskmanager.numberOfTaskSlots=2",
        "-D", "heartbeat.interval=500", "-D", "heartbeat.timeout=5000",
    )  # fmt: skip
    c.remember_pids()
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        yield c
    finally:
        c.remember_pids()
        _strom(directory, "cluster", "stop")
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


@pytest.mark.timeout(300)
def test_a_standalone_cluster_runs_jobs_submitted_with_the_cli(cluster: Cluster, tmp_path: Path) -> None:
    job = tmp_path / "job" / "sums.py"
    job.parent.mkdir()
    job.write_text(SUMS_JOB)
    (job.parent / "helpers.py").write_text(HELPER)
    count = 6000
    out_a, out_b = tmp_path / "out-a", tmp_path / "out-b"
    ckpt = tmp_path / "checkpoints"
    savepoints = tmp_path / "savepoints"

    # the cluster: 2 TaskManagers with 2 slots each
    overview = _get(cluster.rest_url + "/overview")
    assert overview["taskmanagers"] == 2 and overview["slots-total"] == 4, overview

    # a submission without the token is refused before any byte of it is read (unpickling is code execution)
    marker = tmp_path / "unpickled"
    bomb = pickle.dumps(_Touch(str(marker)))
    from strom.deploy.standalone.rest_client import RestClientError, RestClusterClient

    with pytest.raises(RestClientError) as refused:
        RestClusterClient(cluster.rest_url).submit_job(bomb, b"")
    assert refused.value.status == 401 and not marker.exists()

    # two jobs at once, detached: each prints its id
    ids = []
    for out in (out_a, out_b):
        run = _strom(cluster.directory, "run", "-m", cluster.m, "-d", "-p", "2", str(job), str(out), str(ckpt),
                     str(count), "300")  # fmt: skip
        assert run.returncode == 0, run.stdout + run.stderr
        ids.append(run.stdout.split("Job has been submitted with JobID ")[1].split()[0])
    job_a, job_b = ids
    _wait_for("both jobs RUNNING", lambda: all(cluster.job_states().get(j) == "RUNNING" for j in ids))
    listed = _strom(cluster.directory, "list", "-m", cluster.m)
    assert listed.returncode == 0, listed.stderr
    for j in ids:
        assert f"{j} : sums (RUNNING)" in listed.stdout, listed.stdout
    assert _get(cluster.rest_url + "/overview")["slots-available"] == 0

    # a savepoint of B; A stopped with a savepoint and resumed at another parallelism, exactly once
    sp = _strom(cluster.directory, "savepoint", job_b, str(savepoints), "-m", cluster.m)
    assert sp.returncode == 0, sp.stdout + sp.stderr
    assert Path(sp.stdout.split("Savepoint completed. Path: ")[1].strip()).is_dir()
    stop = _strom(cluster.directory, "stop", job_a, "--savepoint-path", str(savepoints), "-m", cluster.m)
    assert stop.returncode == 0, stop.stdout + stop.stderr
    savepoint_a = stop.stdout.split("Savepoint completed. Path: ")[1].strip()
    assert cluster.job_states()[job_a] == "CANCELED"  # strom's stop-with-savepoint ends CANCELED (docs)
    resumed = _strom(cluster.directory, "run", "-m", cluster.m, "-s", savepoint_a, "-p", "1", str(job), str(out_a),
                     str(ckpt), str(count), "3000")  # fmt: skip
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "FINISHED" in resumed.stdout  # the attached run's summary line
    rows = _committed(out_a)
    per_key = Counter(k for k, _ in rows)
    expected_counts = Counter(i % 7 for i in range(count))
    assert per_key == expected_counts  # every record once: nothing lost, nothing twice
    sums = {k: max(s for kk, s in rows if kk == k) for k in per_key}
    assert sums == {k: sum(i for i in range(count) if i % 7 == k) for k in range(7)}

    # B cancelled
    cancel = _strom(cluster.directory, "cancel", job_b, "-m", cluster.m)
    assert cancel.returncode == 0 and f"Cancelled job {job_b}." in cancel.stdout, cancel.stdout + cancel.stderr

    # a TaskManager SIGKILLed is lost for the ResourceManager; a third one joins and is used
    tm_pid = int((cluster.directory / "taskmanager-1.pid").read_text())
    os.kill(tm_pid, signal.SIGKILL)
    _wait_for("the killed TaskManager to be lost", lambda: len(cluster.task_managers()) == 1)
    added = _strom(cluster.directory, "cluster", "add-taskmanager", "-D", "taskmanager.numberOfTaskSlots=2",
                   "-D", "heartbeat.interval=500", "-D", "heartbeat.timeout=5000")  # fmt: skip
    assert added.returncode == 0, added.stdout + added.stderr
    cluster.remember_pids()
    assert len(cluster.task_managers()) == 2
    wide = _strom(cluster.directory, "run", "-m", cluster.m, "-p", "4", str(job), str(tmp_path / "out-c"),
                  str(ckpt), "400", "100000")  # fmt: skip  # 4 slots: only with the new TaskManager's two
    assert wide.returncode == 0, wide.stdout + wide.stderr
    assert Counter(k for k, _ in _committed(tmp_path / "out-c")) == Counter(i % 7 for i in range(400))

    # the cluster outlived its jobs; stop leaves no process
    status = _strom(cluster.directory, "cluster", "status")
    assert status.returncode == 0 and json.loads(status.stdout)["overview"]["taskmanagers"] == 2
    pids = _cluster_pids(cluster.directory)
    stopped = _strom(cluster.directory, "cluster", "stop")
    assert stopped.returncode == 0, stopped.stderr
    alive = [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    assert not alive, f"left running: {alive}"
    assert not list(cluster.directory.glob("*.pid"))
