"""The checkpoint driver on its narrow collaborators alone — a plan calculator, coordinator contexts, a task gateway
and a listener — with no JobMaster, no TaskManager and no network (issue 27 §4)."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import pytest

from strom import StreamExecutionEnvironment
from strom.exceptions import CheckpointError
from strom.graph.execution_graph import ExecutionGraph
from strom.runtime.checkpoint.checkpoint_driver import CheckpointDriver, TriggerResult
from strom.runtime.checkpoint.coordinator import CheckpointCoordinatorConfiguration
from strom.runtime.checkpoint.metadata import CheckpointMetadata
from strom.runtime.checkpoint.plan_calculator import CheckpointPlan, DefaultCheckpointPlanCalculator
from strom.runtime.checkpoint.storage import CheckpointStorage
from strom.runtime.execution_state import ExecutionState, JobStatus
from strom.runtime.operators.coordination import TriggerCheckpointMessage


def _graph() -> ExecutionGraph:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.from_sequence(0, 10).map(lambda x: x).rebalance().add_sink(lambda v: None)
    graph = ExecutionGraph(env.get_job_graph())
    graph.transition_state(JobStatus.RUNNING)
    return graph


def _sources(graph: ExecutionGraph) -> set[str]:
    return {ex.attempt_id for ex in graph.all_executions() if not ex.vertex.inputs}


def test_the_plan_waits_until_every_task_runs_and_then_triggers_the_sources() -> None:
    graph = _graph()
    calculator = DefaultCheckpointPlanCalculator(graph, not_leader=lambda: "")
    assert calculator.calculate_checkpoint_plan().not_ready.endswith("not RUNNING")
    for ex in graph.all_executions():
        ex.state = ExecutionState.RUNNING
    plan = calculator.calculate_checkpoint_plan()
    assert set(plan.tasks_to_trigger) == _sources(graph)
    assert set(plan.tasks_to_ack) == {ex.attempt_id for ex in graph.all_executions()}
    assert plan.not_ready == ""


def test_a_finished_source_hands_the_trigger_to_the_tasks_it_fed() -> None:
    graph = _graph()
    for ex in graph.all_executions():
        ex.state = ExecutionState.FINISHED if ex.attempt_id in _sources(graph) else ExecutionState.RUNNING
    plan = DefaultCheckpointPlanCalculator(graph, not_leader=lambda: "").calculate_checkpoint_plan()
    running = {ex.attempt_id for ex in graph.all_executions() if ex.state is ExecutionState.RUNNING}
    assert set(plan.tasks_to_ack) == running
    assert set(plan.tasks_to_trigger) <= running and plan.tasks_to_trigger


def test_no_plan_without_leadership() -> None:
    graph = _graph()
    for ex in graph.all_executions():
        ex.state = ExecutionState.RUNNING
    plan = DefaultCheckpointPlanCalculator(graph, not_leader=lambda: "not the leader").calculate_checkpoint_plan()
    assert plan == CheckpointPlan(not_ready="not the leader")


class _Coordinator:
    def __init__(self) -> None:
        self.events: list[str] = []

    def checkpoint_coordinator(self, checkpoint_id: int) -> bytes | None:
        self.events.append(f"snapshot {checkpoint_id}")
        return b"enumerator state"

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        self.events.append(f"complete {checkpoint_id}")

    def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        self.events.append(f"aborted {checkpoint_id}")


class _Tasks:
    def __init__(self) -> None:
        self.triggered: list[tuple[str, int]] = []
        self.notified: list[tuple[str, str, int]] = []

    def trigger_checkpoint(self, attempt_id: str, message: TriggerCheckpointMessage, on_result: TriggerResult) -> None:
        self.triggered.append((attempt_id, message.checkpoint_id))
        on_result(True, None)

    def notify_checkpoint_complete(self, attempt_id: str, checkpoint_id: int) -> None:
        self.notified.append(("complete", attempt_id, checkpoint_id))

    def notify_checkpoint_aborted(self, attempt_id: str, checkpoint_id: int) -> None:
        self.notified.append(("aborted", attempt_id, checkpoint_id))


class _Listener:
    stopping_with_savepoint = False

    def __init__(self) -> None:
        self.completed: list[CheckpointMetadata] = []
        self.failures: list[str] = []

    def on_checkpoint_complete(self, metadata: CheckpointMetadata) -> None:
        self.completed.append(metadata)

    def on_global_failure(self, reason: str) -> None:
        self.failures.append(reason)


def test_a_checkpoint_runs_from_trigger_to_notification_on_the_collaborators_alone(tmp_path: Path) -> None:
    graph = _graph()
    for ex in graph.all_executions():
        ex.state = ExecutionState.RUNNING
    coordinator, tasks, listener = _Coordinator(), _Tasks(), _Listener()
    op_id = next(cfg.operator_id for v in graph.job_graph.vertices.values() for cfg in v.chain)

    async def run() -> str:
        driver = CheckpointDriver(
            graph.job_graph.job_id,
            CheckpointCoordinatorConfiguration(),
            CheckpointStorage(str(tmp_path), graph.job_graph.job_id),
            plan_calculator=DefaultCheckpointPlanCalculator(graph, not_leader=lambda: ""),
            coordinators={op_id: coordinator},
            tasks=tasks,
            listener=listener,
        )
        done = driver.trigger_checkpoint(is_savepoint=False)
        for ex in graph.all_executions():
            states: Any = {}
            driver.receive_acknowledge(ex.attempt_id, 1, states, {})
        path = await asyncio.wait_for(done, 10)
        driver.close()
        await driver.task_group.stop(grace=5.0)
        return path

    path = asyncio.run(run())
    assert coordinator.events == ["snapshot 1", "complete 1"]  # snapshotted before any trigger, told first
    assert {a for a, _ in tasks.triggered} == _sources(graph)
    assert sorted(tasks.notified) == sorted(("complete", ex.attempt_id, 1) for ex in graph.all_executions())
    assert [m.checkpoint_id for m in listener.completed] == [1] and listener.failures == []
    assert listener.completed[0].operator_states[op_id].coordinator is not None
    assert (Path(path.removeprefix("file://")) / "_metadata").exists()


class _OptionsTasks(_Tasks):
    def __init__(self) -> None:
        super().__init__()
        self.options: list[Any] = []

    def trigger_checkpoint(self, attempt_id: str, message: TriggerCheckpointMessage, on_result: TriggerResult) -> None:
        self.options.append(message.options)
        super().trigger_checkpoint(attempt_id, message, on_result)


@pytest.mark.parametrize(
    ("config", "unaligned", "timeout_ms"),
    [
        (CheckpointCoordinatorConfiguration(unaligned=True), True, 0),
        (CheckpointCoordinatorConfiguration(unaligned=True, aligned_timeout_ms=200), False, 200),
        (CheckpointCoordinatorConfiguration(), False, 0),
    ],
    ids=["unaligned", "aligned-checkpoint-timeout", "aligned"],
)
def test_barriers_start_unaligned_or_aligned_with_the_aligned_checkpoint_timeout(
    tmp_path: Path, config: CheckpointCoordinatorConfiguration, unaligned: bool, timeout_ms: int
) -> None:
    graph = _graph()
    for ex in graph.all_executions():
        ex.state = ExecutionState.RUNNING

    def options(is_savepoint: bool) -> Any:
        tasks = _OptionsTasks()

        async def run() -> None:
            driver = CheckpointDriver(
                graph.job_graph.job_id,
                config,
                CheckpointStorage(str(tmp_path), graph.job_graph.job_id),
                plan_calculator=DefaultCheckpointPlanCalculator(graph, not_leader=lambda: ""),
                coordinators={},
                tasks=tasks,
                listener=_Listener(),
            )
            target = str(tmp_path / "savepoints") if is_savepoint else None
            done = driver.trigger_checkpoint(is_savepoint=is_savepoint, target_dir=target)
            for _ in range(200):
                if tasks.options:
                    break
                await asyncio.sleep(0.01)
            driver.close()
            await driver.task_group.stop(grace=5.0)
            with contextlib.suppress(CheckpointError):  # aborted by the close: only the trigger matters here
                await asyncio.wait_for(done, 10)

        asyncio.run(run())
        return tasks.options[0]

    checkpoint, savepoint = options(False), options(True)
    assert (checkpoint.unaligned, checkpoint.aligned_timeout_ms) == (unaligned, timeout_ms)
    assert (savepoint.is_savepoint, savepoint.unaligned, savepoint.aligned_timeout_ms) == (True, False, 0)


def _incremental_ack(tmp_path: Path, cid: int, subtask: int, names: list[str]) -> Any:
    """What a task acknowledges for an incremental RocksDB checkpoint that references the shared files ``names``
    (each written under ``<tmp>/<job>/shared``)."""
    from strom.runtime.checkpoint.metadata import IncrementalRemoteKeyedStateHandle
    from strom.runtime.checkpoint.snapshot import OperatorSubtaskStateHandles
    from strom.runtime.checkpoint.storage import CheckpointStorageLocation

    location = CheckpointStorageLocation(uri=str(tmp_path / "job" / f"chk-{cid}"))
    shared = {}
    for name in names:
        local = tmp_path / f"local-{name}"
        local.write_bytes(name.encode())
        shared[name] = location.upload_file(name, str(local), shared=True)
    start, end = (0, 63) if subtask == 0 else (64, 127)
    return OperatorSubtaskStateHandles(incremental=IncrementalRemoteKeyedStateHandle(start, end, cid, shared=shared))


def test_incremental_acknowledgements_make_incremental_metadata_and_aborts_delete_only_their_own_uploads(
    tmp_path: Path,
) -> None:
    graph = _graph()
    for ex in graph.all_executions():
        ex.state = ExecutionState.RUNNING
    op_id = next(cfg.operator_id for v in graph.job_graph.vertices.values() for cfg in v.chain)
    executions = sorted(graph.all_executions(), key=lambda ex: ex.attempt_id)
    listener = _Listener()
    shared = tmp_path / "job" / "shared"

    async def run() -> None:
        driver = CheckpointDriver(
            "job",
            CheckpointCoordinatorConfiguration(),
            CheckpointStorage(str(tmp_path), "job"),
            plan_calculator=DefaultCheckpointPlanCalculator(graph, not_leader=lambda: ""),
            coordinators={},
            tasks=_Tasks(),
            listener=listener,
        )
        done = driver.trigger_checkpoint(is_savepoint=False)
        for ex in executions:
            i = ex.vertex.subtask_index
            driver.receive_acknowledge(ex.attempt_id, 1, {op_id: _incremental_ack(tmp_path, 1, i, [f"a{i}"])}, {})
        await asyncio.wait_for(done, 10)
        second = driver.trigger_checkpoint(is_savepoint=False)
        first = next(ex for ex in executions if ex.vertex.subtask_index == 0)
        late = next(ex for ex in executions if ex.vertex.subtask_index == 1)
        driver.receive_acknowledge(first.attempt_id, 2, {op_id: _incremental_ack(tmp_path, 2, 0, ["a0", "b"])}, {})
        driver.receive_decline(late.attempt_id, 2, "no", True)
        with contextlib.suppress(CheckpointError):
            await asyncio.wait_for(second, 10)
        driver.receive_acknowledge(late.attempt_id, 2, {op_id: _incremental_ack(tmp_path, 2, 1, ["a1", "c"])}, {})
        driver.close()
        await driver.task_group.stop(grace=5.0)

    asyncio.run(run())
    (metadata,) = listener.completed
    incremental = metadata.operator_states[op_id].incremental
    assert {name for inc in incremental.values() for name in inc.shared} == {"a0", "a1"}
    assert {p.name for p in shared.iterdir()} == {"a0", "a1"}  # b (declined) and c (late) were only theirs
