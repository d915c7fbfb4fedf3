"""A failing user function fails the job with a message that names it; nothing is left running."""

from __future__ import annotations

import contextlib

import psutil
import pytest

from strom import JobExecutionError, JobStatus, MapFunction, StreamExecutionEnvironment


def boom_on_13(x: int) -> int:
    if x == 13:
        raise ValueError("boom")
    return x


def _no_task_managers_left() -> None:
    for p in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.NoSuchProcess):
            assert (
                "strom.runtime.taskexecutor" not in " ".join(p.cmdline())
                or not p.is_running()
                or (p.status() == psutil.STATUS_ZOMBIE)
            ), f"TaskManager {p.pid} still running"


@pytest.mark.timeout(60)
def test_user_exception_fails_job_with_operator_subtask_and_traceback() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.from_sequence(0, 10_000).rebalance().map(boom_on_13).name("explode").print()
    with pytest.raises(JobExecutionError) as info:
        env.execute("failing job")
    msg = str(info.value)
    assert "ValueError: boom" in msg
    assert "operator 'explode'" in msg
    assert "subtask 1/2" in msg or "subtask 2/2" in msg
    assert "input record" in msg and "(13)" in msg
    assert "boom_on_13" in msg  # the user's own traceback is shown
    assert 'raise ValueError("boom")' in msg
    _no_task_managers_left()


@pytest.mark.timeout(60)
def test_exception_in_open_fails_the_job() -> None:
    class BadOpen(MapFunction):
        def open(self, ctx: object) -> None:
            raise RuntimeError("cannot connect to the database")

        def map(self, value: int) -> int:
            return value

    env = StreamExecutionEnvironment.get_execution_environment()
    env.from_sequence(1, 10).map(BadOpen()).name("db lookup").print()
    with pytest.raises(JobExecutionError, match=r"(?s)cannot connect to the database.*operator 'db lookup'"):
        env.execute()
    _no_task_managers_left()


@pytest.mark.timeout(60)
def test_failure_in_collect_iteration_is_raised_to_the_reader() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    stream = env.from_sequence(0, 100).map(boom_on_13)
    got = []
    with pytest.raises(JobExecutionError, match="boom"), stream.execute_and_collect() as results:
        for v in results:
            got.append(v)
    _no_task_managers_left()


@pytest.mark.timeout(60)
def test_cancel_a_running_job() -> None:
    import time

    def slow(x: int) -> int:
        time.sleep(0.001)
        return x

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.from_sequence(0, 10_000_000).map(slow).add_sink(lambda v: None)
    client = env.execute_async("endless")
    assert client.get_job_status() in (JobStatus.CREATED, JobStatus.RUNNING)
    client.cancel()
    assert client.get_job_status() is JobStatus.CANCELED
    _no_task_managers_left()


@pytest.mark.timeout(60)
def test_bad_key_fails_with_hint() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.from_sequence(1, 10).key_by(lambda x: [x]).reduce(lambda a, b: a).print()
    with pytest.raises(JobExecutionError, match=r"key must be hashable.*list.*hint"):
        env.execute()
