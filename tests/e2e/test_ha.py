"""JobManager high availability on real processes: two ``strom jobmanager`` contending for the lease in a shared HA
directory, two ``strom taskmanager`` following the leader, a job writing through the exactly-once FileSink.

The leader is SIGKILLed twice (each time a standby takes over, recovers the job from its latest completed checkpoint
and the TaskManagers re-register with it; the killed one is restarted as the new standby), and in another test
paused with SIGSTOP past its lease and woken with SIGCONT (it must step down without committing or deploying). The
output equals the failure-free result. Ports are 0; waits poll for conditions, deadlines only turn hangs into
failures; every process is killed at the end (psutil check).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import os
import shutil
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

JOB = textwrap.dedent(
    """
    import sys
    from helpers import key_of
    from strom import CheckpointingMode, DataGeneratorSource, FileSink, JsonLinesEncoder, StreamExecutionEnvironment
    from strom.connectors.file_system import RollingPolicy

    out, checkpoints, count, rate = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
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
    env.execute("ha-sums")
    """
)
HELPER = "def key_of(i):\n    return i % 7\n"


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.loads(resp.read())


def _wait_for(what: str, condition: Callable[[], Any], timeout: float = 90.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(OSError, ValueError):
            value = condition()
            if value:
                return value
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


def committed(out: Path) -> list[list[int]]:
    rows = []
    for f in out.rglob("*"):
        if f.is_file() and not f.name.startswith("."):
            rows += [json.loads(line) for line in f.read_text().splitlines() if line]
    return rows


class HaCluster:
    """JobManagers and TaskManagers of one HA directory, each a process of its own with a log file."""

    def __init__(self, tmp: Path, lease_ms: int = 2000, retry_ms: int = 250) -> None:
        self.tmp = tmp
        self.cluster_dir = tmp / "cluster"
        self.ha_dir = tmp / "ha"
        self.defines = [
            "-D", "rest.port=0", "-D", "jobmanager.rpc.port=0", "-D", "taskmanager.numberOfTaskSlots=2",
            "-D", "heartbeat.interval=500", "-D", "heartbeat.timeout=5000",
            "-D", "high-availability.type=file", "-D", f"high-availability.storageDir={self.ha_dir}",
            "-D", f"high-availability.file.leader-election.lease-duration={lease_ms}",
            "-D", f"high-availability.file.leader-election.retry-period={retry_ms}",
        ]  # fmt: skip
        self.procs: list[subprocess.Popen[bytes]] = []
        self.job_managers: dict[int, subprocess.Popen[bytes]] = {}
        self.env = dict(os.environ, STROM_CLUSTER_DIR=str(self.cluster_dir))

    def _spawn(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        with open(self.tmp / f"{name}-{len(self.procs)}.log", "ab") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "strom.cli", *args, "--cluster-dir", str(self.cluster_dir), *self.defines],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=self.env,
                start_new_session=True,
            )  # fmt: skip
        self.procs.append(proc)
        return proc

    def start_job_manager(self) -> subprocess.Popen[bytes]:
        proc = self._spawn("jobmanager", "jobmanager")
        self.job_managers[proc.pid] = proc
        return proc

    def start_task_manager(self) -> subprocess.Popen[bytes]:
        return self._spawn("taskmanager", "taskmanager")

    def lease(self) -> Any:
        from strom.runtime.highavailability.lease_store import FileLeaseStore

        return FileLeaseStore(str(self.ha_dir / "default")).read_latest()

    def leader(self, other_than: str = "") -> Any:
        """The lease of a leader that serves (its addresses published), not of session ``other_than``."""
        lease = self.lease()
        now = int(time.time() * 1000)
        if lease is None or not lease.rest_url or lease.expired(now) or lease.session_id == other_than:
            return None
        return lease

    def leader_pid(self) -> int:
        lease = self.leader()
        assert lease is not None
        return int(lease.holder.rsplit(":", 1)[1])

    def job_state(self, rest_url: str, job_id: str) -> str:
        return str({j["jid"]: j["state"] for j in _get(rest_url + "/jobs/overview")["jobs"]}.get(job_id, ""))

    def registered_task_managers(self, rest_url: str) -> int:
        return len(_get(rest_url + "/taskmanagers")["taskmanagers"])

    def strom(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "strom.cli", *args], capture_output=True, text=True, timeout=120, env=self.env
        )

    def close(self) -> None:
        pids = {p.pid for p in self.procs}
        for p in self.procs:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p.pid, signal.SIGCONT)
                p.kill()
        for p in self.procs:
            with contextlib.suppress(Exception):
                p.wait(timeout=15)
        alive = [pid for pid in pids if psutil.pid_exists(pid) and psutil.Process(pid).status() != "zombie"]
        assert not alive, f"left running: {alive}"

    def logs(self) -> str:
        return "\n".join(
            f"--- {f.name}\n" + f.read_text(errors="replace")[-3000:] for f in sorted(self.tmp.glob("*.log"))
        )


@pytest.fixture
def ha(tmp_path: Path) -> Iterator[HaCluster]:
    cluster = HaCluster(tmp_path)
    try:
        cluster.start_job_manager()
        _wait_for("a leader", cluster.leader, 60)
        cluster.start_job_manager()
        for _ in range(2):
            cluster.start_task_manager()
        _wait_for("2 TaskManagers", lambda: cluster.registered_task_managers(cluster.leader().rest_url) == 2, 60)
        yield cluster
    except BaseException:
        print(cluster.logs())
        raise
    finally:
        cluster.close()


def _submit(ha: HaCluster, tmp: Path, count: int, rate: float) -> tuple[str, Path]:
    job = tmp / "job" / "sums.py"
    job.parent.mkdir()
    job.write_text(JOB)
    (job.parent / "helpers.py").write_text(HELPER)
    out = tmp / "out"
    m = ha.leader().rest_url.removeprefix("http://")
    run = ha.strom("run", "-m", m, "-d", "-p", "2", str(job), str(out), str(tmp / "checkpoints"), str(count), str(rate))
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout.split("Job has been submitted with JobID ")[1].split()[0], out


def _check_exactly_once(out: Path, count: int) -> None:
    rows = committed(out)
    assert Counter(k for k, _ in rows) == Counter(i % 7 for i in range(count))  # every record once
    sums = {k: max(s for kk, s in rows if kk == k) for k, _ in rows}
    assert sums == {k: sum(i for i in range(count) if i % 7 == k) for k in range(7)}


def _wait_taken_over(ha: HaCluster, old_session: str, job_id: str) -> Any:
    lease = _wait_for("a standby to take over", lambda: ha.leader(other_than=old_session), 60)
    _wait_for(
        "the job RUNNING on the new leader with both TaskManagers",
        lambda: ha.job_state(lease.rest_url, job_id) == "RUNNING" and ha.registered_task_managers(lease.rest_url) == 2,
        90,
    )
    return lease


@pytest.mark.timeout(400)
def test_the_job_stays_exactly_once_when_the_leader_is_killed_twice(ha: HaCluster, tmp_path: Path) -> None:
    count = 12000
    job_id, out = _submit(ha, tmp_path, count, 300)
    for _ in range(2):
        lease = ha.leader()
        _wait_for("the job RUNNING", lambda lease=lease: ha.job_state(lease.rest_url, job_id) == "RUNNING", 60)
        before = len(committed(out))
        _wait_for("output committed by a checkpoint", lambda before=before: len(committed(out)) > before, 60)
        os.kill(ha.leader_pid(), signal.SIGKILL)
        new = _wait_taken_over(ha, lease.session_id, job_id)
        ha.start_job_manager()  # the killed one comes back as the new standby
        # clients find the new leader through the cluster directory and the HA directory
        listed = ha.strom("list")
        assert listed.returncode == 0 and job_id in listed.stdout, listed.stdout + listed.stderr
        from strom.client.remote_executor import remote_rest_url
        from strom.config import Configuration

        config = Configuration({"high-availability.type": "file", "high-availability.storageDir": str(ha.ha_dir)})
        assert remote_rest_url(config) == new.rest_url
    final = ha.leader()
    _wait_for("the job FINISHED", lambda: ha.job_state(final.rest_url, job_id) == "FINISHED", 180)
    _check_exactly_once(out, count)
    assert not list((ha.ha_dir / "default" / "jobgraphs").glob("*.jobgraph"))  # an ended job is not recovered


@pytest.mark.timeout(300)
def test_a_job_that_ended_while_its_leader_died_is_cleaned_up_not_run_again(ha: HaCluster, tmp_path: Path) -> None:
    """Flink's JobResultStore: the leader records a job's result (dirty) before any clean-up. Here it "dies" right
    after that — the HA directory holds the job graph and the dirty result, as a SIGKILL between the two would leave
    it — and the standby that takes over finishes the clean-up and answers the result; it does not run the job
    again (which would repeat its output)."""
    from strom.runtime.highavailability.stores import JobResultEntry, JobResultStore

    count = 700
    job_id, out = _submit(ha, tmp_path, count, 200)  # 3.5 s: its graph is still in the HA directory when looked for
    ha_dir = ha.ha_dir / "default"
    graph_file = ha_dir / "jobgraphs" / f"{job_id}.jobgraph"
    kept = tmp_path / "kept.jobgraph"
    _wait_for("the job graph in the HA directory", lambda: graph_file.exists() and shutil.copy(graph_file, kept), 60)
    lease = ha.leader()
    _wait_for("the job FINISHED", lambda: ha.job_state(lease.rest_url, job_id) == "FINISHED", 120)
    _check_exactly_once(out, count)
    committed_before = sorted(committed(out))
    assert not graph_file.exists()  # cleaned up: and with delete-on-commit (Flink's default) no entry is left
    assert not list((ha_dir / "job-results").glob("*.json"))
    shutil.copy(kept, graph_file)  # the state of a leader that died after recording the result
    JobResultStore(str(ha_dir)).create_dirty_result(
        JobResultEntry(job_id=job_id, job_name="sums", application_status="SUCCEEDED", net_runtime_ms=1)
    )
    os.kill(ha.leader_pid(), signal.SIGKILL)
    new = _wait_for("a standby to take over", lambda: ha.leader(other_than=lease.session_id), 60)
    _wait_for("its clean-up finished", lambda: not graph_file.exists() and not list((ha_dir / "job-results").iterdir()))
    result = _get(f"{new.rest_url}/jobs/{job_id}/execution-result")
    assert result["status"]["id"] == "COMPLETED" and result["job-execution-result"]["application-status"] == "SUCCEEDED"
    # not run again: the clean-up removed its graph before the recovery read the graphs
    assert job_id not in {j["jid"] for j in _get(new.rest_url + "/jobs/overview")["jobs"]}
    assert sorted(committed(out)) == committed_before


@pytest.mark.timeout(400)
def test_a_stale_leader_steps_down_without_committing(ha: HaCluster, tmp_path: Path) -> None:
    count = 9000
    job_id, out = _submit(ha, tmp_path, count, 300)
    lease = ha.leader()
    _wait_for("output committed by a checkpoint", lambda: len(committed(out)) > 0, 60)
    stale_pid = ha.leader_pid()
    os.kill(stale_pid, signal.SIGSTOP)
    try:
        _wait_taken_over(ha, lease.session_id, job_id)
    finally:
        os.kill(stale_pid, signal.SIGCONT)
    stale_log = next(f for f in ha.tmp.glob("jobmanager-*.log") if str(stale_pid) in f.read_text(errors="replace"))
    _wait_for("the stale leader to step down", lambda: "leadership lost; standby" in stale_log.read_text(), 60)
    assert "fails over" not in stale_log.read_text()  # it steps down; failing over is the new leader's business
    final = ha.leader()
    assert int(final.holder.rsplit(":", 1)[1]) != stale_pid
    _wait_for("the job FINISHED", lambda: ha.job_state(final.rest_url, job_id) == "FINISHED", 180)
    _check_exactly_once(out, count)


@pytest.mark.timeout(400)
def test_an_attached_run_follows_the_failover_to_the_new_leader(ha: HaCluster, tmp_path: Path) -> None:
    """``strom run`` (attached) with the HA directory in its configuration: the leader it submitted to is SIGKILLed
    while it waits; it reads the new leader from the lease, polls the same job id there and exits 0."""
    count = 6000
    job = tmp_path / "job" / "sums.py"
    job.parent.mkdir()
    job.write_text(JOB)
    (job.parent / "helpers.py").write_text(HELPER)
    out = tmp_path / "out"
    lease = ha.leader()
    client_log = tmp_path / "attached-client.txt"
    with open(client_log, "wb") as log:
        client = subprocess.Popen(
            [sys.executable, "-m", "strom.cli", "run", "-m", lease.rest_url.removeprefix("http://"), "-p", "2",
             "-D", "high-availability.type=file", "-D", f"high-availability.storageDir={ha.ha_dir}",
             str(job), str(out), str(tmp_path / "checkpoints"), str(count), "300"],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=ha.env, start_new_session=True,
        )  # fmt: skip
    ha.procs.append(client)  # killed by ha.close() whatever happens
    text = _wait_for("the job id", lambda: "JobID " in client_log.read_text() and client_log.read_text(), 60)
    job_id = text.split("Job has been submitted with JobID ")[1].split()[0]
    _wait_for("the job RUNNING", lambda: ha.job_state(lease.rest_url, job_id) == "RUNNING", 60)
    _wait_for("output committed by a checkpoint", lambda: len(committed(out)) > 0, 60)
    os.kill(ha.leader_pid(), signal.SIGKILL)
    assert client.poll() is None  # still waiting when its JobManager died
    _wait_taken_over(ha, lease.session_id, job_id)
    try:
        code = client.wait(timeout=240)
    except subprocess.TimeoutExpired:
        pytest.fail("the attached client did not end\n" + client_log.read_text())
    output = client_log.read_text()
    assert code == 0, output
    assert "following the new leader" in output and "FINISHED" in output, output
    _check_exactly_once(out, count)


# -- strom cluster start --jobmanagers N (Flink's start-cluster.sh with conf/masters) ------------------------------
def test_more_than_one_job_manager_needs_high_availability(tmp_path: Path) -> None:
    from standalone_cluster import strom

    started = strom(tmp_path / "cluster", "cluster", "start", "--jobmanagers", "2", "-D", "rest.port=0")
    assert started.returncode == 1, started.stdout + started.stderr
    assert "expected high-availability.type: file with --jobmanagers 2" in started.stderr
    assert not list((tmp_path / "cluster").glob("*.pid"))  # refused before any process started


@pytest.mark.timeout(240)
def test_cluster_start_with_a_standby_that_takes_over(tmp_path: Path) -> None:
    """``strom cluster start --jobmanagers 2``: the leader's pid file is SIGKILLed while a job runs; the standby
    takes over, the job runs on it, a submission and a listing started meanwhile land on it, savepoint and cancel
    work there without -m, ``status`` tells the roles and ``stop`` leaves no process."""
    from standalone_cluster import running_cluster, write_sums_job

    ha_dir = tmp_path / "ha"
    options = (
        "high-availability.type=file", f"high-availability.storageDir={ha_dir}",
        "high-availability.file.leader-election.lease-duration=2000",
        "high-availability.file.leader-election.retry-period=250",
    )  # fmt: skip
    with running_cluster(tmp_path / "cluster", *options, taskmanagers=1, jobmanagers=2) as c:
        pid_of = {p.stem: int(p.read_text()) for p in c.directory.glob("*.pid")}
        assert set(pid_of) == {"jobmanager", "jobmanager-2", "taskmanager-1"}

        def roles() -> dict[str, Any]:
            status = c.strom("cluster", "status")
            info = json.loads(status.stdout)
            return {n: (p["running"], p.get("role")) for n, p in info["processes"].items()} | {
                "overview": info["overview"] is not None
            }

        assert roles() == {
            "jobmanager": (True, "leader"),
            "jobmanager-2": (True, "standby"),
            "taskmanager-1": (True, None),
            "overview": True,
        }
        job = write_sums_job(tmp_path / "job")
        out, checkpoints = tmp_path / "out", tmp_path / "checkpoints"
        run = c.strom("run", "-m", c.m, "-d", str(job), str(out), str(checkpoints), "1000000", "200")
        assert run.returncode == 0, run.stdout + run.stderr
        job_id = run.stdout.split("Job has been submitted with JobID ")[1].split()[0]
        _wait_for("the job RUNNING", lambda: c.job_states().get(job_id) == "RUNNING", 60)
        old = ha_dir / "default"
        from strom.runtime.highavailability.lease_store import FileLeaseStore

        session = FileLeaseStore(str(old)).read_latest().session_id
        os.kill(pid_of["jobmanager"], signal.SIGKILL)  # the leader, by its pid file
        # clients without -m follow the failover (the cluster directory recorded the HA directory): a submission
        # and a listing started while no JobManager leads land on the next leader
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            second = pool.submit(c.strom, "run", "-D", "execution.target=remote", "-d", str(job),
                                 str(tmp_path / "out-2"), str(tmp_path / "chk-2"), "1000000", "200")  # fmt: skip
            listed = pool.submit(c.strom, "list")
            submitted, listing = second.result(), listed.result()
        assert submitted.returncode == 0, submitted.stdout + submitted.stderr
        second_id = submitted.stdout.split("Job has been submitted with JobID ")[1].split()[0]
        assert listing.returncode == 0 and job_id in listing.stdout, listing.stdout + listing.stderr
        lease = _wait_for(
            "the standby to lead",
            lambda: (
                (lease := FileLeaseStore(str(old)).read_latest()) is not None
                and lease.session_id != session
                and lease.rest_url
                and lease
            ),
            60,
        )
        assert lease.holder.endswith(f":{pid_of['jobmanager-2']}")
        _wait_for(
            "the job RUNNING on the new leader, its TaskManager re-registered",
            lambda: (
                {j["jid"]: j["state"] for j in _get(lease.rest_url + "/jobs/overview")["jobs"]}.get(job_id) == "RUNNING"
                and len(_get(lease.rest_url + "/taskmanagers")["taskmanagers"]) == 1
            ),
            90,
        )
        assert c.rest_url == lease.rest_url  # the new leader's jobmanager.json: clients find it
        taken = c.strom("savepoint", job_id, str(tmp_path / "savepoints"))
        assert taken.returncode == 0, taken.stdout + taken.stderr
        assert (Path(taken.stdout.split("Savepoint completed. Path: ")[1].split()[0]) / "_metadata").exists()
        cancelled = c.strom("cancel", second_id)
        assert cancelled.returncode == 0 and f"Cancelled job {second_id}." in cancelled.stdout, cancelled.stderr
        assert roles() == {
            "jobmanager": (False, ""),
            "jobmanager-2": (True, "leader"),
            "taskmanager-1": (True, None),
            "overview": True,
        }
        stopped = c.strom("cluster", "stop")
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr
        assert "jobmanager-2" in stopped.stdout and "taskmanager-1" in stopped.stdout
        alive = [p for p in pid_of.values() if psutil.pid_exists(p) and psutil.Process(p).status() != "zombie"]
        assert not alive, f"left running: {alive}"
        assert not list(c.directory.glob("*.pid"))
