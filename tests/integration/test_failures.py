"""A failing job says what failed first: a user function's error names it, any other strom error shows its message
before strom's own frames; nothing is left running."""

from __future__ import annotations

import contextlib
import logging
import threading

import psutil
import pytest

from strom import (
    Configuration,
    JobExecutionError,
    JobStatus,
    MapFunction,
    StreamExecutionEnvironment,
    WatermarkStrategy,
)
from strom.config import ClusterOptions, RestartStrategyOptions, TaskManagerOptions
from strom.connectors.collection import CollectionSource


def boom_on_13(x: int) -> int:
    if x == 13:
        raise ValueError("boom")
    return x


def _no_task_managers_left() -> None:
    threads = [t.name for t in threading.enumerate() if t.name.startswith("strom-taskmanager-")]
    assert not threads, f"TaskManager threads still running: {threads}"  # minicluster.taskmanager-mode: thread
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


@pytest.mark.timeout(300)
def test_fifty_failing_runs_tear_down_their_remote_channels_without_stray_errors(
    capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """A subtask that fails right after deploying gets its channels released while their partition requests are
    still in flight; no TaskManager may then log a ``KeyError`` or an exception nobody retrieved. Fifty failing
    runs: five jobs on two TaskManagers (remote channels both ways), each failing over nine times, then failing."""
    jobs, attempts = 5, 10
    config = Configuration(
        {
            TaskManagerOptions.NUM_TASK_SLOTS.key: 1,
            ClusterOptions.NUM_TASK_MANAGERS.key: 2,
            RestartStrategyOptions.RESTART_STRATEGY.key: "fixed-delay",
            RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS.key: attempts - 1,
            RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY.key: 0,
        }
    )
    with caplog.at_level(logging.WARNING):
        for run in range(jobs):
            env = StreamExecutionEnvironment.get_execution_environment(config)
            env.set_parallelism(2)
            env.from_sequence(0, 10_000).rebalance().map(boom_on_13).name("explode").add_sink(lambda v: None)
            with pytest.raises(JobExecutionError, match="boom"):
                env.execute(f"failing {run}")
    failovers = [r for r in caplog.records if "fails over" in r.getMessage()]
    assert len(failovers) == jobs * (attempts - 1)  # with each job's final failure: fifty failing runs
    out, err = capfd.readouterr()  # the TaskManagers' stderr (they inherit ours) and the client's
    lines = out.splitlines() + err.splitlines() + [r.getMessage() for r in caplog.records]
    stray = [line for line in lines if any(s in line for s in ("never retrieved", "Unhandled exception", "KeyError"))]
    assert not stray, "\n".join(stray[:20])
    _no_task_managers_left()


def _job_with_a_str_timestamp(configuration: Configuration | None = None) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment(configuration)
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: str(e))
    env.from_source(CollectionSource([1, 2, 3]), strategy, "events").map(lambda x: x).print()
    return env


@pytest.mark.timeout(60)
def test_a_strom_error_shows_its_message_first_without_internal_frames() -> None:
    env = _job_with_a_str_timestamp()
    with pytest.raises(JobExecutionError) as info:
        env.execute("str timestamps")
    lines = str(info.value).splitlines()
    assert lines[0].endswith("failed:")  # job ... failed: task '...' failed:
    assert "InvalidProgramError: expected the timestamp assigner of operator 'Source: events'" in lines[1]
    assert "got '1' (str)" in lines[1]
    assert not any("task.py" in line or "stream_task.py" in line or "Traceback" in line for line in lines)
    _no_task_managers_left()


@pytest.mark.timeout(60)
def test_at_debug_the_internal_traceback_follows_strom_s_message() -> None:
    conf = Configuration()
    conf.set_string("logging.level", "DEBUG")
    env = _job_with_a_str_timestamp(conf)
    strom_log = logging.getLogger("strom")
    saved = strom_log.level  # an explicit logging.level sets the client's too
    try:
        with pytest.raises(JobExecutionError) as info:
            env.execute("str timestamps")
    finally:
        strom_log.setLevel(saved)
    text = str(info.value)
    message = text.index("InvalidProgramError: expected the timestamp assigner")
    internal = text.index("Internal traceback")
    assert message < internal
    assert "stream_task.py" in text[internal:]
    _no_task_managers_left()


@pytest.mark.timeout(90)
def test_the_failover_record_names_the_operator_and_the_exception(caplog: pytest.LogCaptureFixture) -> None:
    conf = Configuration()
    conf.set_string("restart-strategy.type", "fixed-delay")
    conf.set_string("restart-strategy.fixed-delay.attempts", "1")
    conf.set_string("restart-strategy.fixed-delay.delay", "10")
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    env.enable_checkpointing(100)
    env.from_sequence(0, 100).map(boom_on_13).name("explode").print()
    with caplog.at_level(logging.WARNING, logger="strom"), pytest.raises(JobExecutionError):
        env.execute("failing over")
    failovers = [r.getMessage() for r in caplog.records if "fails over" in r.getMessage()]
    assert len(failovers) == 1, failovers
    assert "operator 'explode'" in failovers[0]
    assert failovers[0].endswith("ValueError: boom")
    _no_task_managers_left()


@pytest.mark.timeout(60)
def test_checkpointing_with_unbounded_restarts_notes_it_once_in_the_log_at_info(
    caplog: pytest.LogCaptureFixture,
) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.enable_checkpointing(100)
    env.from_sequence(0, 100).map(lambda x: x).print()
    with caplog.at_level(logging.INFO, logger="strom"):
        env.execute("unbounded restarts")
    notes = [r for r in caplog.records if "restarts the job forever" in r.getMessage()]
    assert len(notes) == 1, notes
    assert notes[0].levelno == logging.INFO  # Flink's default configuration: nothing to warn about
    assert "exponential-delay" in notes[0].getMessage() and "attempts-before-reset-backoff" in notes[0].getMessage()

    caplog.clear()
    conf = Configuration()
    conf.set_string("restart-strategy.exponential-delay.attempts-before-reset-backoff", "10")
    conf.set_string("restart-strategy.type", "exponential-delay")
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    env.enable_checkpointing(100)
    env.from_sequence(0, 100).map(lambda x: x).print()
    with caplog.at_level(logging.INFO, logger="strom"):
        env.execute("bounded restarts")
    assert not [r for r in caplog.records if "restarts the job forever" in r.getMessage()]
