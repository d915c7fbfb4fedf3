"""The MiniCluster's thread mode (``minicluster.taskmanager-mode: thread``): TaskManagers on threads of this process
that leave its interpreter settings, logging and signal handlers as they found them, are replaced when lost, and
are gone — threads and ports — when the cluster closes."""

from __future__ import annotations

import gc
import logging
import os
import signal
import sys
import threading
import time

import psutil
import pytest

from strom import Configuration, JobStatus, StreamExecutionEnvironment
from strom.config import ClusterOptions

THREAD = Configuration({ClusterOptions.TASK_MANAGER_MODE.key: "thread"})


def _process_settings() -> dict[str, object]:
    root = logging.getLogger()
    return {
        "gc threshold": gc.get_threshold(),
        "gc frozen": gc.get_freeze_count(),
        "switch interval": sys.getswitchinterval(),
        "root handlers": list(root.handlers),
        "root level": root.level,
        "SIGINT": signal.getsignal(signal.SIGINT),
        "SIGTERM": signal.getsignal(signal.SIGTERM),
    }


def _listening_ports() -> set[int]:
    return {c.laddr.port for c in psutil.Process().net_connections("tcp") if c.status == psutil.CONN_LISTEN}


def _task_manager_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("strom-taskmanager-")]


def _where(x: int) -> tuple[int, int, str, tuple[int, int, int], float]:
    return x, os.getpid(), threading.current_thread().name, gc.get_threshold(), sys.getswitchinterval()


@pytest.mark.timeout(60)
def test_task_managers_on_threads_run_the_job_here_and_leave_the_process_as_they_found_it() -> None:
    before, ports = _process_settings(), _listening_ports()
    env = StreamExecutionEnvironment.get_execution_environment(THREAD)
    env.set_parallelism(2)  # two TaskManagers of one slot: the records cross between them over TCP
    stream = env.from_sequence(0, 999).rebalance().map(_where).key_by(lambda r: r[0] % 7).map(lambda r: r)
    with stream.execute_and_collect() as results:
        rows = list(results)
        cluster = results._client._cluster
        assert len(cluster.threads) == 2 and cluster.processes == [] and cluster.task_manager_pids == []
    assert sorted(r[0] for r in rows) == list(range(1000))
    assert {r[1] for r in rows} == {os.getpid()}  # the subtasks ran in this process ...
    assert len({r[2] for r in rows}) == 2  # ... on the task threads of two subtasks
    assert {(r[3], r[4]) for r in rows} == {(before["gc threshold"], before["switch interval"])}  # not tuned
    assert _process_settings() == before
    assert not _task_manager_threads()
    assert not any(t.alive for t in cluster.threads)
    assert _listening_ports() <= ports  # the JobManager's, REST's and every TaskExecutor's servers closed


def _slowly(x: int) -> int:
    time.sleep(0.005)
    return x


@pytest.mark.timeout(90)
def test_a_task_manager_thread_that_stops_is_replaced_and_the_job_restarts_on_the_new_one() -> None:
    config = THREAD.copy()
    config.set_string("restart-strategy.type", "fixed-delay")
    config.set_string("restart-strategy.fixed-delay.attempts", "3")
    config.set_string("restart-strategy.fixed-delay.delay", "100 ms")
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    env.from_sequence(0, 799).map(_slowly).add_sink(lambda _: None)  # ~2 s per subtask
    client = env.execute_async("a TaskManager thread stops")
    cluster = client._cluster
    deadline = time.monotonic() + 30
    while not [m for m in client.get_metrics() if m.state == "RUNNING"]:
        assert client.get_job_status() is not JobStatus.FAILED and time.monotonic() < deadline, "the job did not run"
        time.sleep(0.01)
    cluster.threads[0].stop()  # as a TaskManager whose process ends: its connections close, its tasks fail
    result = client.get_job_execution_result()  # FINISHED, or it raises
    assert result.num_restarts >= 1
    assert len(cluster.threads) == 3  # the replacement
    assert not cluster.threads[0].alive
    assert not _task_manager_threads()


def _stuck_once(x: int) -> int:
    if x == 0:
        time.sleep(3)  # ignores the cancellation, as user code can; bounded, so its thread ends before the test
    return x


@pytest.mark.timeout(60)
def test_a_task_stuck_past_the_cancellation_timeout_closes_its_task_manager_thread_not_this_process(
    caplog: pytest.LogCaptureFixture,
) -> None:
    config = THREAD.copy()
    config.set_string("task.cancellation.timeout", "500 ms")
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(1)
    env.from_sequence(0, 9).map(_stuck_once).add_sink(lambda _: None)
    client = env.execute_async("stuck in user code")
    cluster = client._cluster
    deadline = time.monotonic() + 30
    while not [m for m in client.get_metrics() if m.state == "RUNNING"]:
        assert time.monotonic() < deadline, "the job did not run"
        time.sleep(0.01)
    time.sleep(0.2)  # into the sleep
    with caplog.at_level(logging.CRITICAL):
        client.cancel()  # returns once the TaskManager is gone, while its task thread still sleeps
    assert client.get_job_status() is JobStatus.CANCELED
    assert [r for r in caplog.records if "did not stop within" in r.getMessage()]  # the watchdog fired ...
    assert not cluster.threads[0].alive  # ... and closed the TaskExecutor; this process lives on
