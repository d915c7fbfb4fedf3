"""No TaskManager outlives its cluster: Ctrl-C, a killed client, a killed TaskManager; and none outlives being
declared lost."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from failover import committed_files

from strom import (
    CheckpointedFunction,
    CheckpointListener,
    Configuration,
    DataGeneratorSource,
    FileSink,
    JobExecutionError,
    MapFunction,
    SimpleStringEncoder,
    StreamExecutionEnvironment,
)
from strom.config import ClusterOptions, HeartbeatOptions, RestartStrategyOptions, TaskManagerOptions
from strom.runtime.execution_state import JobStatus

ENDLESS_JOB = textwrap.dedent(
    """
    import os, sys, time
    from strom import StreamExecutionEnvironment

    def slow(x):
        time.sleep(0.001)
        return x

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.from_sequence(0, 10**9).map(slow).add_sink(lambda v: None)
    client = env.execute_async("endless")
    print("RUNNING", flush=True)
    client.get_job_execution_result()
    """
)


def _task_managers_of(pid: int) -> list[psutil.Process]:
    return [
        p for p in psutil.Process(pid).children(recursive=True) if "strom.runtime.taskexecutor" in " ".join(p.cmdline())
    ]


def _start_client(tmp_path: Path) -> tuple[subprocess.Popen[str], list[int]]:
    script = tmp_path / "job.py"
    script.write_text(ENDLESS_JOB)
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "RUNNING"
    tms = [p.pid for p in _task_managers_of(proc.pid)]
    assert len(tms) == 2
    return proc, tms


def _gone(pids: list[int], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not any(psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE for p in pids):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.timeout(60)
def test_ctrl_c_stops_the_job_and_every_task_manager(tmp_path: Path) -> None:
    proc, tms = _start_client(tmp_path)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=30) != 0  # KeyboardInterrupt
    proc.stdout.close()  # type: ignore[union-attr]
    assert _gone(tms, 15)


@pytest.mark.timeout(60)
def test_task_managers_die_with_a_killed_client(tmp_path: Path) -> None:
    proc, tms = _start_client(tmp_path)
    proc.kill()
    proc.wait(timeout=10)
    proc.stdout.close()  # type: ignore[union-attr]
    assert _gone(tms, 15)


@pytest.mark.timeout(60)
def test_killed_task_manager_fails_the_job_instead_of_hanging() -> None:
    def slow(x: int) -> int:
        time.sleep(0.001)
        return x

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.from_sequence(0, 10**9).map(slow).rebalance().add_sink(lambda v: None)
    client = env.execute_async("victim")
    cluster = client._cluster
    victim = cluster.processes[1].pid
    os.kill(victim, signal.SIGKILL)
    with pytest.raises(JobExecutionError, match=rf"TaskManager tm-\d \(pid {victim}\) was lost"):
        client.get_job_execution_result()
    assert all(p.poll() is not None for p in cluster.processes)


def _wait_for(condition: Any, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"expected {what} within {timeout:g} s"
        time.sleep(0.02)


@pytest.mark.timeout(120)
def test_a_task_manager_lost_by_heartbeat_is_killed_and_reaped_while_the_job_fails_over() -> None:
    """A frozen TaskManager (SIGSTOP) keeps its connections open: only its heartbeats stop. Once the JobManager
    declares it lost, the MiniCluster kills and reaps it then — not when the cluster closes — and the job fails
    over to a replacement TaskManager."""

    def slow(x: int) -> int:
        time.sleep(0.001)
        return x

    config = Configuration(
        {
            TaskManagerOptions.NUM_TASK_SLOTS.key: 1,
            ClusterOptions.NUM_TASK_MANAGERS.key: 2,
            # long enough that a healthy TaskManager on a loaded machine is not declared lost as well
            HeartbeatOptions.INTERVAL.key: "500 ms",
            HeartbeatOptions.TIMEOUT.key: "5 s",
            RestartStrategyOptions.RESTART_STRATEGY.key: "fixed-delay",
            RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS.key: 10,
            RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY.key: 0,
        }
    )
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    env.from_sequence(0, 10**9).map(slow).rebalance().add_sink(lambda v: None)
    client = env.execute_async("frozen task manager")
    cluster = client._cluster
    jm = cluster.dispatcher.job_master(client.job_id)
    victim = cluster.processes[1]
    try:
        _wait_for(
            lambda: {m.task_manager_id for m in client.get_metrics()} == {"tm-1", "tm-2"},
            "both TaskManagers to run tasks",
        )
        os.kill(victim.pid, signal.SIGSTOP)
        # the cluster reaps what it kills: the pid is gone, not a zombie, and the cluster has its exit status
        _wait_for(lambda: not psutil.pid_exists(victim.pid), "the frozen TaskManager to be killed and reaped")
        assert victim.returncode == -signal.SIGKILL
        assert not jm.status.is_globally_terminal
        # the job runs again, partly on a TaskManager started to replace the lost one
        first = {"tm-1", "tm-2"}  # started with the cluster
        _wait_for(
            lambda: (
                jm.num_restarts >= 1
                and jm.status is JobStatus.RUNNING
                and bool({m.task_manager_id for m in client.get_metrics() if m.attempt_number >= 1} - first)
            ),
            "the job to fail over to a replacement TaskManager",
        )
        assert len(cluster.processes) >= 3
    finally:
        if victim.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(victim.pid, signal.SIGCONT)
        client.cancel()


RUNNING_JOB = textwrap.dedent(
    """
    import time
    from strom import StreamExecutionEnvironment

    def slow(x):
        time.sleep(0.001)
        return x

    def sink(value, seen=[]):
        if not seen:  # the job runs: its first record reached a sink (a TaskManager shares our stdout)
            seen.append(value)
            print("RUNNING", flush=True)

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.from_sequence(0, 10**9).map(slow).add_sink(sink).set_parallelism(1)  # one sink: one line on stdout
    env.execute("endless")
    """
)


@pytest.mark.timeout(90)
@pytest.mark.parametrize("via", ["python", "strom run"])
def test_ctrl_c_prints_one_line_and_exits_130(tmp_path: Path, via: str) -> None:
    script = tmp_path / "job.py"
    script.write_text(RUNNING_JOB)
    cmd = [sys.executable, str(script)] if via == "python" else [sys.executable, "-m", "strom.cli", "run", str(script)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "RUNNING"
        tms = [p.pid for p in _task_managers_of(proc.pid)]
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:  # a failed check leaves no client (nor, through its stdin, TaskManagers) running
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=30)
    # `strom run` exits 130; a plain script ends by SIGINT as Python does on Ctrl-C (130 in a shell)
    assert proc.returncode == (130 if via == "strom run" else -signal.SIGINT), err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("job 'endless' (") and lines[0].endswith(") cancelled"), err
    assert _gone(tms, 15)


@pytest.mark.timeout(90)
def test_a_terminals_ctrl_c_while_task_managers_start_leaves_no_task_manager_traceback(tmp_path: Path) -> None:
    """A terminal sends Ctrl-C to its whole foreground process group: the TaskManagers, started in their own group,
    never see it (not even while still importing); the client stops them in order."""
    script = tmp_path / "job.py"
    script.write_text(RUNNING_JOB)
    proc = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 60
        while not (tms := [p.pid for p in _task_managers_of(proc.pid)]) and time.monotonic() < deadline:
            time.sleep(0.005)
        assert tms, "expected the client to start TaskManager processes"
        # outside the group a terminal signals, whatever they are doing (the import window is too short to hit)
        assert all(os.getpgid(tm) != proc.pid for tm in tms)
        os.killpg(proc.pid, signal.SIGINT)  # the terminal's Ctrl-C: the client's whole process group
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=30)
    assert proc.returncode != 0
    assert "taskexecutor" not in err, err  # no TaskManager interrupted mid-import or mid-run printed a traceback
    assert _gone(tms, 15)


CHECKPOINTING_JOB = textwrap.dedent(
    """
    import sys, time
    from strom import StreamExecutionEnvironment
    from strom.connectors.file_system import FileSink, RollingPolicy, SimpleStringEncoder

    def slow(x):
        time.sleep(0.001)
        return x

    env = StreamExecutionEnvironment.get_execution_environment()
    if sys.argv[3:] != ["--no-checkpoints"]:
        env.enable_checkpointing(100)
    # parts in progress across checkpoints roll at 4 kb (a few seconds): committed ones appear too
    policy = RollingPolicy.default_rolling_policy(part_size="4 kb")
    env.from_sequence(0, int(sys.argv[2])).map(slow).sink_to(
        FileSink.for_row_format(sys.argv[1], SimpleStringEncoder()).with_rolling_policy(policy).build()
    )
    client = env.execute_async("checkpointing")
    print("RUNNING", flush=True)
    client.get_job_execution_result()
    """
)


def _temp_checkpoint_dirs(tmp: Path) -> list[Path]:
    return sorted(tmp.glob("strom-checkpoints-*"))


@pytest.mark.timeout(120)
def test_the_next_run_removes_the_temporary_checkpoints_of_a_killed_client(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"  # the clients' TMPDIR: no other run's directories in sight
    tmp.mkdir()
    script = tmp_path / "job.py"
    script.write_text(CHECKPOINTING_JOB)
    env = {**os.environ, "TMPDIR": str(tmp)}
    out = tmp_path / "out"
    killed = subprocess.Popen([sys.executable, str(script), str(out), str(10**9)], stdout=subprocess.PIPE, env=env)
    assert killed.stdout is not None
    assert killed.stdout.readline().strip() == b"RUNNING"
    deadline = time.monotonic() + 60
    while not any(d.glob("*/chk-*") for d in _temp_checkpoint_dirs(tmp)):  # a checkpoint completed
        assert time.monotonic() < deadline, "no checkpoint completed within 60 s"
        time.sleep(0.1)
    tms = [p.pid for p in _task_managers_of(killed.pid)]
    killed.kill()
    killed.wait(timeout=10)
    killed.stdout.close()
    assert _gone(tms, 15)
    [left] = _temp_checkpoint_dirs(tmp)  # nobody could clean up after SIGKILL

    next_run = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "out2"), "10"], capture_output=True, env=env, timeout=90
    )
    assert next_run.returncode == 0, next_run.stderr
    assert not left.exists()
    assert _temp_checkpoint_dirs(tmp) == []  # the next run's own went when it closed


def _uncommitted(out: Path) -> list[str]:
    """The FileSink's hidden files in ``out`` and its buckets: in-progress and pending parts, owner markers."""
    return sorted(f.name for f in out.rglob(".*") if f.is_file())


def _committed(out: Path) -> dict[str, bytes]:
    """The committed parts, by their path in ``out`` (bucket directories included)."""
    return {str(f.relative_to(out)): f.read_bytes() for f in committed_files(out)}


def _freeze_with_parts_in_progress(
    client: subprocess.Popen[bytes], out: Path, *, committed: bool = True
) -> list[psutil.Process]:
    """SIGSTOP the client and its TaskManagers at a moment when ``out`` holds in-progress parts, and committed
    ones if ``committed`` (nothing moves any more: what is there now is what a SIGKILL leaves)."""
    deadline = time.monotonic() + 60
    while True:
        assert time.monotonic() < deadline, "expected committed and in-progress parts within 60 s"
        procs = [psutil.Process(client.pid), *_task_managers_of(client.pid)]
        for p in procs:
            p.suspend()
        if (_committed(out) or not committed) and any(n.endswith(".inprogress") for n in _uncommitted(out)):
            return procs
        for p in reversed(procs):
            p.resume()
        time.sleep(0.05)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("checkpoints", ["temporary", "none"])
def test_the_next_run_removes_the_uncommitted_parts_of_a_killed_client(tmp_path: Path, checkpoints: str) -> None:
    """A FileSink job checkpointing into the client's temporary directory (no execution.checkpointing.dir), or
    not checkpointing at all: once its client is SIGKILLed, nothing can restore its output, so the next strom run
    on the machine — any job — removes the job's in-progress and pending parts with their owner markers; the
    committed parts stay as they were."""
    flags = ["--no-checkpoints"] if checkpoints == "none" else []
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    script = tmp_path / "job.py"
    script.write_text(CHECKPOINTING_JOB)
    env = {**os.environ, "TMPDIR": str(tmp)}
    out = tmp_path / "out"
    killed = subprocess.Popen(
        [sys.executable, str(script), str(out), str(10**9), *flags], stdout=subprocess.PIPE, env=env
    )
    try:
        assert killed.stdout is not None
        assert killed.stdout.readline().strip() == b"RUNNING"
        frozen = _freeze_with_parts_in_progress(killed, out, committed=checkpoints != "none")
    finally:
        killed.kill()
        killed.wait(timeout=10)
        killed.stdout.close()  # type: ignore[union-attr]
    assert _gone([p.pid for p in frozen[1:]], 15)
    committed = _committed(out)
    left = _uncommitted(out)
    assert any(n.endswith(".inprogress") for n in left)

    next_run = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "out2"), "10"], capture_output=True, env=env, timeout=90
    )
    assert next_run.returncode == 0, next_run.stderr
    assert _uncommitted(out) == []
    assert _committed(out) == committed
    assert _uncommitted(tmp_path / "out2") == []  # a job that ends commits everything and leaves no marker
    assert _temp_checkpoint_dirs(tmp) == []


SAVEPOINT_JOB = textwrap.dedent(
    """
    import os, sys, time
    from strom import CheckpointListener, Configuration, DataGeneratorSource, MapFunction, StreamExecutionEnvironment
    from strom.connectors.file_system import FileSink, SimpleStringEncoder
    from strom.exceptions import CheckpointError

    out, mode, savepoints = sys.argv[1:4]
    COUNT = 20_000

    class HoldNotifications(MapFunction, CheckpointListener):
        # chained before the sink: a completed checkpoint's notification stops here, so the sink never commits
        def map(self, value):
            return value

        def notify_checkpoint_complete(self, checkpoint_id):
            if mode == "savepoint":
                time.sleep(60)

    # a lost part fails the restore at once, not restart after restart
    env = StreamExecutionEnvironment.get_execution_environment(Configuration({"restart-strategy.type": "none"}))
    env.set_parallelism(2)
    # no execution.checkpointing.dir: checkpoints in the client's temporary directory; no periodic one before
    # the savepoint in the first run
    env.enable_checkpointing(3_600_000 if mode == "savepoint" else 100)
    source = DataGeneratorSource(lambda i: i, COUNT, 2_000 if mode == "savepoint" else None)
    (
        env.from_source(source, source_name="numbers").uid("numbers")
        .map(HoldNotifications()).uid("hold")
        .sink_to(FileSink.for_row_format(out, SimpleStringEncoder()).build()).uid("files")
    )
    if mode == "savepoint":
        client = env.execute_async("savepoint")
        deadline = time.monotonic() + 60
        while True:
            try:
                path = client.trigger_savepoint(savepoints)
                break
            except CheckpointError:  # not every task runs yet
                assert time.monotonic() < deadline
                time.sleep(0.05)
        print(path, flush=True)
        client.get_job_execution_result()  # the test kills us first
    else:
        env.execute("restored", savepoint_path=savepoints)
    """
)


@pytest.mark.timeout(120)
def test_a_savepoint_taken_with_temporary_checkpoints_restores_exactly_after_its_client_was_killed(
    tmp_path: Path,
) -> None:
    """The client dies after the savepoint completed but before the sink committed it: the next run sweeps the
    parts written after the savepoint, never the savepoint's own; restoring from it commits them."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    script = tmp_path / "job.py"
    script.write_text(SAVEPOINT_JOB)
    env = {**os.environ, "TMPDIR": str(tmp)}
    out = tmp_path / "out"
    first = subprocess.Popen(
        [sys.executable, str(script), str(out), "savepoint", str(tmp_path / "savepoints")],
        stdout=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        assert first.stdout is not None
        savepoint = first.stdout.readline().strip()
        assert savepoint, "the first run printed no savepoint"
        tms = [p.pid for p in _task_managers_of(first.pid)]
    finally:
        first.kill()
        first.wait(timeout=10)
        first.stdout.close()  # type: ignore[union-attr]
    assert _gone(tms, 15)
    assert _committed(out) == {}  # the savepoint's parts wait, uncommitted, for a restore

    restored = subprocess.run(
        [sys.executable, str(script), str(out), "restore", savepoint], capture_output=True, env=env, timeout=90
    )
    assert restored.returncode == 0, restored.stderr
    rows = sorted(int(line) for data in _committed(out).values() for line in data.decode().splitlines())
    assert rows == list(range(20_000))
    assert _uncommitted(out) == []
    assert _temp_checkpoint_dirs(tmp) == []


class _FailOnCommit(MapFunction, CheckpointedFunction, CheckpointListener):
    """Chained before the sink: fails the task on the notification of the first checkpoint that covered records,
    before the sink could commit them."""

    def __init__(self) -> None:
        self.count = 0
        self.at: dict[int, int] = {}

    def initialize_state(self, context: Any) -> None:
        pass

    def snapshot_state(self, context: Any) -> None:
        self.at[context.checkpoint_id] = self.count

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        if self.at.get(checkpoint_id, 0) > 0:
            raise RuntimeError("failed before the sink committed")

    def map(self, value: int) -> int:
        self.count += 1
        return value


@pytest.mark.timeout(60)
def test_a_client_that_ends_removes_the_parts_its_failed_job_left_pending(tmp_path: Path) -> None:
    out = tmp_path / "out"
    env = StreamExecutionEnvironment.get_execution_environment(Configuration({"restart-strategy.type": "none"}))
    env.set_parallelism(1)
    env.enable_checkpointing(100)  # into the client's temporary directory
    (
        env.from_source(DataGeneratorSource(lambda i: i, 10**6, 1_000), source_name="numbers")
        .map(_FailOnCommit())
        .sink_to(FileSink.for_row_format(str(out), SimpleStringEncoder()).build())
    )
    with pytest.raises(JobExecutionError, match="failed before the sink committed"):
        env.execute("failing")
    # its checkpoints went with the cluster: nothing could commit those parts, and none is left
    assert [f for f in out.rglob("*") if f.is_file()] == []
