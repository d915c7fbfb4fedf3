"""The JobMaster's region failover as a state machine (no TaskManagers): which subtasks a task failure or a lost
TaskManager cancels, what the exception history records, how the restart strategy counts, and when the global
failover runs instead."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from strom import Configuration, StreamExecutionEnvironment
from strom.graph.execution_graph import SlotAssignment
from strom.runtime.deployment import TaskExecutionState
from strom.runtime.execution_state import ExecutionState, JobStatus
from strom.runtime.jobmaster.jobmaster import JobMaster
from strom.runtime.resourcemanager.resource_manager import ResourceManager


def _job(strategy: str, keyed: bool = False, attempts: int = 5, restart: str = "fixed-delay") -> Any:
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration(
            {
                "jobmanager.execution.failover-strategy": strategy,
                "restart-strategy.type": restart,
                "restart-strategy.fixed-delay.attempts": attempts,
            }
        )
    )
    env.set_parallelism(4)
    env.disable_operator_chaining()
    stream = env.from_sequence(0, 100)
    if keyed:
        stream = stream.key_by(lambda x: x % 3)  # type: ignore[assignment]
    stream.map(lambda x: x).add_sink(lambda v: None)
    return env.get_job_graph()


def _run(job_graph: Any, act: Callable[[JobMaster], None], tms: int = 4) -> JobMaster:
    async def run() -> JobMaster:
        rm = ResourceManager(secret=b"s" * 32, heartbeat_interval=1.0, heartbeat_timeout=5.0)
        jm = JobMaster(job_graph, rm, slot_timeout=1.0)
        jm.graph.transition_state(JobStatus.RUNNING)
        for ex in jm.graph.all_executions():  # subtask i of every vertex in slot i, on TaskManager tm-(i % tms)
            i = ex.vertex.subtask_index
            ex.slot = SlotAssignment(
                tm_id=f"tm-{i % tms}", slot_index=i // tms, allocation_id=f"a{i}", data_address=("h", 4000 + i)
            )
            ex.state = ExecutionState.RUNNING
        act(jm)
        jm.task_group.close()
        jm.task_group.cancel()
        return jm

    return asyncio.run(run())


def _fail(jm: JobMaster, vertex: int, subtask: int) -> None:
    ejv = list(jm.graph.job_vertices.values())[vertex]
    ex = ejv.task_vertices[subtask].current_execution
    assert ex is not None
    jm.update_task_execution_state(
        TaskExecutionState(
            job_id=jm.job_id,
            execution_attempt_id=ex.attempt_id,
            state=ExecutionState.FAILED.value,
            error_text="Traceback (most recent call last):\nValueError: boom",
            error=ValueError("boom"),
        )
    )


def _states(jm: JobMaster) -> dict[tuple[str, int], ExecutionState]:
    return {
        (ex.vertex.job_vertex.job_vertex.name, ex.vertex.subtask_index): ex.state for ex in jm.graph.all_executions()
    }


def test_a_task_failure_cancels_only_its_region_and_the_job_runs_on() -> None:
    jm = _run(_job("region"), lambda jm: _fail(jm, 1, 2))
    assert jm.status is JobStatus.RUNNING
    for (_, subtask), state in _states(jm).items():
        if subtask == 2:
            assert state in (ExecutionState.FAILED, ExecutionState.CANCELING), (subtask, state)
        else:
            assert state is ExecutionState.RUNNING
    (entry,) = jm.exception_history
    assert entry.task_name == "Map (3/4)" and entry.concurrent == ()
    assert sorted(entry.restarted_tasks) == ["Map (3/4)", "Sink: Unnamed (3/4)", "Source: Sequence Source (3/4)"]
    assert jm.restart_strategy.current_restart_attempt == 1  # type: ignore[attr-defined]
    assert jm.region_failover.restarting


def test_full_and_a_keyed_job_fail_over_globally() -> None:
    for job_graph in (_job("full"), _job("region", keyed=True)):
        jm = _run(job_graph, lambda jm: _fail(jm, 1, 2))
        assert jm.status is JobStatus.RESTARTING
        (entry,) = jm.exception_history
        assert entry.restarted_tasks == ()
        assert all(s in (ExecutionState.FAILED, ExecutionState.CANCELING) for s in _states(jm).values())


def test_a_lost_task_manager_fails_each_region_it_hosted_once() -> None:
    # two TaskManagers: tm-0 hosts subtasks 0 and 2 (two regions), tm-1 subtasks 1 and 3
    jm = _run(_job("region"), lambda jm: jm.task_manager_lost("tm-0", "TaskManager tm-0 (pid 1) was lost"), tms=2)
    assert jm.status is JobStatus.RUNNING
    assert len(jm.exception_history) == 2
    for entry in jm.exception_history:
        subtask = entry.task_name[-5:]
        assert subtask in ("(1/4)", "(3/4)")
        assert sorted(c.task_name[-5:] for c in entry.concurrent) == [subtask] * 2
        assert "was lost" in entry.text
    assert jm.restart_strategy.current_restart_attempt == 2  # type: ignore[attr-defined]
    for (_, subtask), state in _states(jm).items():
        assert (state is ExecutionState.RUNNING) == (subtask in (1, 3))


def test_an_exhausted_restart_strategy_fails_the_job() -> None:
    def act(jm: JobMaster) -> None:
        _fail(jm, 0, 0)
        _fail(jm, 1, 0)  # cancelled with its region: its failure does not count
        for subtask in (1, 2):
            _fail(jm, 0, subtask)
        assert jm.status is JobStatus.RUNNING
        _fail(jm, 2, 3)  # the 4th failure: one more than fixed-delay's 3 attempts

    jm = _run(_job("region", attempts=3), act)
    assert jm.status is JobStatus.FAILING
    assert len(jm.exception_history) == 4
    assert "allows no further restart" in jm.graph.failure_text


def test_exponential_delay_merges_a_failure_before_its_pending_restart_into_one_attempt() -> None:
    def act(jm: JobMaster) -> None:
        _fail(jm, 1, 0)
        _fail(jm, 1, 3)  # another region, before the first restart happened

    jm = _run(_job("region", restart="exponential-delay"), act)
    assert jm.status is JobStatus.RUNNING
    assert jm.num_restarts == 1  # Flink 1.19's numberOfRestarts: the merged failure is no new attempt
    (entry,) = jm.exception_history
    assert entry.task_name == "Map (1/4)"
    assert [c.task_name for c in entry.concurrent] == ["Map (4/4)"]
    assert sorted(t[-5:] for t in entry.restarted_tasks) == ["(1/4)"] * 3 + ["(4/4)"] * 3
    for (_, subtask), state in _states(jm).items():
        assert (state is ExecutionState.RUNNING) == (subtask in (1, 2))


def test_fixed_delay_counts_each_region_failure() -> None:
    def act(jm: JobMaster) -> None:
        _fail(jm, 1, 0)
        _fail(jm, 1, 3)

    jm = _run(_job("region"), act)
    assert jm.num_restarts == 2
    assert [e.task_name for e in jm.exception_history] == ["Map (1/4)", "Map (4/4)"]
