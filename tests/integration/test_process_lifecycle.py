"""No TaskManager outlives its cluster: Ctrl-C, a killed client, a killed TaskManager."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from strom import JobExecutionError, StreamExecutionEnvironment

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
    env.from_sequence(0, 10**9).map(slow).add_sink(sink)
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
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "RUNNING"
    tms = [p.pid for p in _task_managers_of(proc.pid)]
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    # `strom run` exits 130; a plain script ends by SIGINT as Python does on Ctrl-C (130 in a shell)
    assert proc.returncode == (130 if via == "strom run" else -signal.SIGINT), err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("job 'endless' (") and lines[0].endswith(") cancelled"), err
    assert _gone(tms, 15)


CHECKPOINTING_JOB = textwrap.dedent(
    """
    import sys, time
    from strom import StreamExecutionEnvironment
    from strom.connectors.file_system import FileSink, SimpleStringEncoder

    def slow(x):
        time.sleep(0.001)
        return x

    env = StreamExecutionEnvironment.get_execution_environment()
    env.enable_checkpointing(100)
    env.from_sequence(0, int(sys.argv[2])).map(slow).sink_to(
        FileSink.for_row_format(sys.argv[1], SimpleStringEncoder()).build()
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
