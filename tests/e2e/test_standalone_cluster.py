"""A standalone session cluster run as a user runs it: ``strom cluster start``, jobs submitted with ``strom run -m``,
the CLI's ``list`` / ``savepoint`` / ``stop`` / ``cancel``, the REST API, TaskManagers that leave and join, and
``strom cluster stop`` leaving no process behind.

The cluster and the job program come from ``tests/standalone_cluster.py`` (shared with
``test_service_done_when.py``): every process in its own session under a temporary cluster directory, ports 0, and
waits that poll for a condition.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from standalone_cluster import (
    Cluster,
    cluster_pids,
    committed,
    expected_sums,
    running_cluster,
    wait_for,
    write_sums_job,
)

from strom.deploy.standalone.cluster_dir import ClusterDirectory


class _Touch:
    """Unpickling it creates a file: proof that a body was (not) decoded."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (self.path, "w"))


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    with running_cluster(tmp_path / "cluster") as c:
        yield c


@pytest.mark.timeout(300)
def test_a_standalone_cluster_runs_jobs_submitted_with_the_cli(cluster: Cluster, tmp_path: Path) -> None:
    job = write_sums_job(tmp_path / "job")
    count = 6000
    out_a, out_b = tmp_path / "out-a", tmp_path / "out-b"
    ckpt = tmp_path / "checkpoints"
    savepoints = tmp_path / "savepoints"

    # the cluster: 2 TaskManagers with 2 slots each
    overview = cluster.get("/overview")
    assert overview["taskmanagers"] == 2 and overview["slots-total"] == 4, overview

    # a submission without the token is refused before any byte of it is read (unpickling is code execution)
    marker = tmp_path / "unpickled"
    bomb = pickle.dumps(_Touch(str(marker)))
    from strom.deploy.standalone.rest_client import RestClientError, RestClusterClient

    with pytest.raises(RestClientError) as refused:
        RestClusterClient(cluster.rest_url).submit_job(bomb, b"")
    assert refused.value.status == 401 and not marker.exists()

    # malformed submissions are refused as Flink's JobSubmitHandler refuses them, before anything is unpickled
    from strom.deploy.standalone.rest_client import _multipart
    from strom.web.auth import rest_token

    token = rest_token(ClusterDirectory(cluster.directory).read_secret())
    graph = ("file_0", "job.graph", bomb, "application/octet-stream")
    for request, parts, error in (
        ({}, [graph], "The jobGraphFileName field must not be omitted or be null."),
        # Flink 2's own `flink run` (a JVM client's plan): told what strom runs and how to submit it
        ({"executionPlanFileName": "job.graph"}, [graph], "strom run -m HOST:PORT job.py"),
        ({"jobGraphFileName": "java.graph"}, [("file_0", "java.graph", b"\xac\xed\x00\x05sr", "x")], "Java-serialized"),
        ({"jobGraphFileName": "other.graph"}, [graph], "JobGraph file other.graph could not be found on the server."),
        ({"jobGraphFileName": "job.graph"}, [graph, graph], "got 'job.graph' twice"),
        ({"jobGraphFileName": "job.graph"}, [graph, ("unknown", "", b"x", "text/plain")], "unknown attribute unknown"),
        ({"jobGraphFileName": "job.graph", "jobJarFileNames": ["job.graph"]}, [graph], "expected no jobJarFileNames"),
        (
            {"jobGraphFileName": "job.graph", "jobArtifactFileNames": [{"entryName": "data", "fileName": "job.graph"}]},
            [graph],
            "expected only the 'python_files' artifact",
        ),
    ):
        body, content_type = _multipart([("request", "", json.dumps(request).encode(), "application/json"), *parts])
        with pytest.raises(RestClientError) as malformed:
            RestClusterClient(cluster.rest_url, token=token).request("POST", "/jobs", body, content_type)
        assert malformed.value.status == 400 and error in str(malformed.value), (request, str(malformed.value))
    assert not marker.exists()

    # two jobs at once, detached: each prints its id; at 30 events/s they outlast the steps below on a loaded
    # machine (A is stopped with a savepoint and resumed at full speed, B is cancelled)
    ids = []
    for out in (out_a, out_b):
        run = cluster.strom("run", "-m", cluster.m, "-d", "-p", "2", str(job), str(out), str(ckpt),
                     str(count), "30")  # fmt: skip
        assert run.returncode == 0, run.stdout + run.stderr
        ids.append(run.stdout.split("Job has been submitted with JobID ")[1].split()[0])
    job_a, job_b = ids
    wait_for("both jobs RUNNING", lambda: all(cluster.job_states().get(j) == "RUNNING" for j in ids))
    listed = cluster.strom("list", "-m", cluster.m)
    assert listed.returncode == 0, listed.stderr
    for j in ids:
        assert f"{j} : sums (RUNNING)" in listed.stdout, listed.stdout
    assert cluster.get("/overview")["slots-available"] == 0

    # a savepoint of B; A stopped with a savepoint and resumed at another parallelism, exactly once
    sp = cluster.strom("savepoint", job_b, str(savepoints), "-m", cluster.m)
    assert sp.returncode == 0, sp.stdout + sp.stderr
    assert Path(sp.stdout.split("Savepoint completed. Path: ")[1].strip()).is_dir()
    stop = cluster.strom("stop", job_a, "--savepoint-path", str(savepoints), "-m", cluster.m)
    assert stop.returncode == 0, stop.stdout + stop.stderr
    savepoint_a = stop.stdout.split("Savepoint completed. Path: ")[1].strip()
    assert cluster.job_states()[job_a] == "FINISHED"  # stop-with-savepoint, as Flink's
    resumed = cluster.strom("run", "-m", cluster.m, "-s", savepoint_a, "-p", "1", str(job), str(out_a),
                     str(ckpt), str(count), "3000")  # fmt: skip
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "FINISHED" in resumed.stdout  # the attached run's summary line
    rows = committed(out_a)
    per_key = Counter(k for k, _ in rows)
    expected_counts = Counter(i % 7 for i in range(count))
    assert per_key == expected_counts  # every record once: nothing lost, nothing twice
    sums = {k: max(s for kk, s in rows if kk == k) for k in per_key}
    assert sums == expected_sums(count)

    # B cancelled
    cancel = cluster.strom("cancel", job_b, "-m", cluster.m)
    assert cancel.returncode == 0 and f"Cancelled job {job_b}." in cancel.stdout, cancel.stdout + cancel.stderr

    # a TaskManager SIGKILLed is lost for the ResourceManager; a job that needs more slots than are left is
    # accepted at once (as Flink's Dispatcher: the submission does not wait for slots) and waits for them; a third
    # TaskManager joins and the job runs on it
    tm_pid = int((cluster.directory / "taskmanager-1.pid").read_text())
    os.kill(tm_pid, signal.SIGKILL)
    wait_for("the killed TaskManager to be lost", lambda: len(cluster.task_managers()) == 1)
    wide = cluster.strom("run", "-m", cluster.m, "-d", "-p", "4", str(job), str(tmp_path / "out-c"),
                  str(ckpt), "400", "100000", timeout=60)  # fmt: skip  # 4 slots: only with a new TaskManager's two
    assert wide.returncode == 0, wide.stdout + wide.stderr
    job_c = wide.stdout.split("Job has been submitted with JobID ")[1].split()[0]
    wait_for("the wide job RUNNING, its tasks waiting for slots", lambda: cluster.job_states()[job_c] == "RUNNING")
    added = cluster.strom("cluster", "add-taskmanager")  # with the cluster's -D options: its 2 slots, heartbeats
    assert added.returncode == 0, added.stdout + added.stderr
    cluster.remember_pids()
    assert len(cluster.task_managers()) == 2
    wait_for("the wide job's end", lambda: cluster.job_states()[job_c] == "FINISHED")
    assert Counter(k for k, _ in committed(tmp_path / "out-c")) == Counter(i % 7 for i in range(400))

    # the cluster outlived its jobs; stop leaves no process
    status = cluster.strom("cluster", "status")
    assert status.returncode == 0 and json.loads(status.stdout)["overview"]["taskmanagers"] == 2
    pids = cluster_pids(cluster.directory)
    stopped = cluster.strom("cluster", "stop")
    assert stopped.returncode == 0, stopped.stderr
    alive = [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    assert not alive, f"left running: {alive}"
    assert not list(cluster.directory.glob("*.pid"))
