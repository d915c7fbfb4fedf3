"""Each TaskManager's log file, and Flink's REST paths that serve it (``/taskmanagers/:id/logs``, ``/log``,
``/logs/:filename``, ``/stdout``).

On a MiniCluster: a user function logs a marker from each subtask → the marker is in the log file of the TaskManager
that runs that subtask (in the cluster's log directory) and in its ``GET /taskmanagers/:id/log``, not in the other's;
records below ``logging.level`` are in neither; ``/logs`` lists the file with its size and time; names that are not a
plain file name of the TaskManager's own listing are refused. On a standalone cluster (``strom cluster start``):
the files are under the cluster directory's ``log/``, and ``/stdout`` serves what the TaskManager printed.
Waits poll for a condition; their deadlines only turn a hang into a failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest
from standalone_cluster import http_get

from strom import DataGeneratorSource, StreamExecutionEnvironment
from strom.api.functions import MapFunction, RuntimeContext
from strom.config import Configuration
from strom.runtime.taskexecutor.log_files import TaskManagerLogFiles


def _get_json(url: str) -> Any:
    status, body = http_get(url)
    assert status == 200, (url, status, body)
    return json.loads(body)


def _wait_for(what: str, condition: Callable[[], Any], timeout: float = 90.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.1)


class LogsAMarker(MapFunction[int, int]):
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def open(self, runtime_context: RuntimeContext) -> None:
        import logging

        index = runtime_context.get_index_of_this_subtask()
        logging.getLogger("myjob.marker").info("%s from subtask %d", self.marker, index)
        logging.getLogger("myjob.marker").debug("%s below the level", self.marker)

    def map(self, value: int) -> int:
        return value


@pytest.mark.timeout(120)
def test_a_function_s_log_lines_land_in_its_task_manager_s_file_and_rest_serves_it() -> None:
    marker = f"marker-{uuid.uuid4().hex}"
    conf = Configuration()
    conf.set_string("logging.level", "INFO")
    conf.set_string("minicluster.number-of-taskmanagers", 2)
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    env.set_parallelism(2)
    (
        env.from_source(DataGeneratorSource(lambda i: i, 10**12, records_per_second=100), source_name="numbers")
        .rebalance()
        .map(LogsAMarker(marker))
        .name("marker")
        .add_sink(lambda _: None)
    )
    client = env.execute_async("logs")
    log_dir = Path(client._cluster.log_dir)  # type: ignore[attr-defined]
    try:
        url = client.get_rest_url()
        vertex = next(v for v in _get_json(f"{url}/jobs/{client.get_job_id()}")["vertices"] if "marker" in v["name"])

        def running_placement() -> dict[int, str] | None:
            subtasks = _get_json(f"{url}/jobs/{client.get_job_id()}/vertices/{vertex['id']}")["subtasks"]
            placed = {s["subtask"]: s["taskmanager-id"] for s in subtasks if s["status"] == "RUNNING"}
            return placed if len(placed) == 2 else None

        placement = _wait_for("both marker subtasks running", running_placement)
        tm_ids = sorted(t["id"] for t in _get_json(f"{url}/taskmanagers")["taskmanagers"])
        assert sorted(placement.values()) == tm_ids  # one subtask per TaskManager (one slot each)

        for subtask, tm_id in placement.items():
            line = f"{marker} from subtask {subtask}"
            served = _wait_for(
                f"the marker in {tm_id}'s /log",
                lambda tm=tm_id, ln=line: ln in http_get(f"{url}/taskmanagers/{tm}/log")[1].decode(),
            )
            assert served
            on_disk = (log_dir / f"taskmanager-{tm_id}.log").read_text()
            assert line in on_disk and "myjob.marker" in on_disk
            assert f"{marker} below the level" not in on_disk  # DEBUG < logging.level INFO
            other = f"{marker} from subtask {1 - subtask}"
            assert other not in on_disk  # the other subtask runs in the other TaskManager

            listing = _get_json(f"{url}/taskmanagers/{tm_id}/logs")
            assert set(listing) == {"logs"}
            names = {f["name"]: f for f in listing["logs"]}
            assert f"taskmanager-{tm_id}.log" in names  # only its own files: not the other TaskManager's
            assert not any(n.startswith(f"taskmanager-{t}.") for t in tm_ids if t != tm_id for n in names)
            entry = names[f"taskmanager-{tm_id}.log"]
            assert set(entry) == {"name", "size", "mtime"} and entry["size"] > 0
            assert abs(entry["mtime"] - time.time() * 1000) < 600_000

            status, by_name = http_get(f"{url}/taskmanagers/{tm_id}/logs/taskmanager-{tm_id}.log")
            assert status == 200 and line in by_name.decode()

        tm = tm_ids[0]
        for bad in ("..%2F..%2F..%2Fetc%2Fpasswd", "..", ".hidden", "%2Fetc%2Fpasswd", f"taskmanager-{tm_ids[1]}.log"):
            status, body = http_get(f"{url}/taskmanagers/{tm}/logs/{bad}")
            assert status in (400, 404), (bad, status, body)
            assert b"root:" not in body and "errors" in json.loads(body), (bad, body)
        status, body = http_get(f"{url}/taskmanagers/{tm}/logs/../../../etc/passwd")
        assert status == 404 and b"root:" not in body
        status, _ = http_get(f"{url}/taskmanagers/tm-unknown/log")
        assert status == 404
    finally:
        client.close()
    assert not log_dir.exists()  # a temporary log directory goes with its cluster


def test_only_plain_names_of_the_task_manager_s_own_files_resolve(tmp_path: Path) -> None:
    files = TaskManagerLogFiles(tmp_path / "log", "tm-1")
    files.install()
    try:
        (tmp_path / "log" / "taskmanager-tm-2.log").write_text("another TaskManager's")
        (tmp_path / "secret").write_text("not a log")
        os.symlink(tmp_path / "secret", tmp_path / "log" / "taskmanager-tm-1.log.9")
        assert [f.name for f in files.list_files()] == ["taskmanager-tm-1.log"]
        assert files.resolve("taskmanager-tm-1.log") == tmp_path / "log" / "taskmanager-tm-1.log"
        for bad in ("", ".", "..", "../secret", "/etc/passwd", ".hidden", "a/b", "x\x00y"):
            with pytest.raises(ValueError, match="expected the name of a file"):
                files.resolve(bad)
        for other in ("taskmanager-tm-2.log", "taskmanager-tm-1.log.9", "nothing.log"):
            with pytest.raises(FileNotFoundError):
                files.resolve(other)  # another's file, a symbolic link out of the directory, no file
        data, size = files.read_chunk(files.main_log, 0, 10**9)
        assert len(data) == size  # an empty log: nothing logged at this test's level
    finally:
        files.close()


STANDALONE_JOB = textwrap.dedent(
    """
    import logging
    import sys
    from strom import DataGeneratorSource, StreamExecutionEnvironment

    marker = sys.argv[1]

    def mark(i):
        if i == 0:
            logging.getLogger("myjob.marker").warning("%s at the first record", marker)
            print(marker, "printed", flush=True)
        return i

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.from_source(DataGeneratorSource(lambda i: i, 10**12, records_per_second=50), None, "gen").map(mark).add_sink(
        lambda _: None
    )
    env.execute("standalone logs")
    """
)


def _strom(cluster_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, STROM_CLUSTER_DIR=str(cluster_dir))
    return subprocess.run(
        [sys.executable, "-m", "strom.cli", *args], capture_output=True, text=True, timeout=120, env=env
    )


@pytest.mark.timeout(180)
def test_a_standalone_task_manager_s_files_are_in_the_cluster_directory(tmp_path: Path) -> None:
    directory = tmp_path / "cluster"
    marker = f"marker-{uuid.uuid4().hex}"
    started = _strom(
        directory, "cluster", "start", "--taskmanagers", "1", "-D", "rest.port=0", "-D", "jobmanager.rpc.port=0"
    )
    pids = [int(p.read_text()) for p in directory.glob("*.pid")]
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        url = json.loads((directory / "jobmanager.json").read_text())["rest_url"]
        job = tmp_path / "job.py"
        job.write_text(STANDALONE_JOB)
        run = _strom(directory, "run", "-d", "-m", url.removeprefix("http://"), str(job), marker)
        assert run.returncode == 0, run.stdout + run.stderr
        (tm,) = (t["id"] for t in _get_json(f"{url}/taskmanagers")["taskmanagers"])
        served = _wait_for("the marker in /log", lambda: marker in http_get(f"{url}/taskmanagers/{tm}/log")[1].decode())
        assert served
        assert marker in (directory / "log" / f"taskmanager-{tm}.log").read_text()
        listing = _get_json(f"{url}/taskmanagers/{tm}/logs")["logs"]
        assert [f["name"] for f in listing] == [f"taskmanager-{tm}.log"]
        # its standard output is strom cluster's taskmanager-N.log: what it printed, and what its tasks print
        stdout = _wait_for(
            "the printed marker", lambda: f"{marker} printed" in http_get(f"{url}/taskmanagers/{tm}/stdout")[1].decode()
        )
        assert stdout
    finally:
        _strom(directory, "cluster", "stop")
        procs = []
        for pid in pids:
            with contextlib.suppress(psutil.Error):
                proc = psutil.Process(pid)
                proc.kill()
                procs.append(proc)
        psutil.wait_procs(procs, timeout=10)
