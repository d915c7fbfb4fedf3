"""A task that fails because its data connection to a TaskManager broke names that TaskManager as lost, as the
heartbeat timeout does — so a job's failure does not depend on which signal arrives first (issue 27 §5)."""

from __future__ import annotations

import asyncio
from typing import Any

from strom.exceptions import ClusterError
from strom.runtime.jobmaster.job_result import lost_data_connection
from strom.runtime.network.connection_manager import PartitionRequestClient
from strom.runtime.resourcemanager.resource_manager import task_manager_lost_message


class _Channel:
    def __init__(self) -> None:
        self.errors: list[BaseException] = []

    def on_error(self, error: BaseException) -> None:
        self.errors.append(error)


class _Writer:
    def close(self) -> None:
        pass


def _read_loop_error(exc: BaseException) -> str:
    """The error the real read loop hands its channels when the connection to ``10.0.0.7:40123`` fails."""

    async def run() -> str:
        reader = asyncio.StreamReader()
        reader.set_exception(exc)
        writer: Any = _Writer()
        client = PartitionRequestClient(reader, writer, "10.0.0.7:40123")
        channel = _Channel()
        client.channels[0] = channel  # type: ignore[assignment]
        await client.read_loop(1 << 20)
        assert len(channel.errors) == 1
        return str(channel.errors[0])

    return asyncio.run(run())


def test_a_reset_data_connection_names_the_task_manager_at_its_other_end() -> None:
    text = _read_loop_error(ConnectionResetError(104, "Connection reset by peer"))
    traceback = f"Traceback (most recent call last):\n  ...\nstrom.exceptions.ClusterError: {text}"
    assert lost_data_connection(traceback) == ("10.0.0.7", 40123)


def test_a_data_connection_closed_by_a_dead_peer_names_it_too() -> None:
    text = _read_loop_error(asyncio.IncompleteReadError(b"", 4))
    assert lost_data_connection(text) == ("10.0.0.7", 40123)


def test_an_unreachable_data_server_names_its_task_manager() -> None:
    text = str(ClusterError(f"cannot reach the data server of TaskManager {('10.0.0.7', 40123)}: refused"))
    assert lost_data_connection(text) == ("10.0.0.7", 40123)


def test_other_failures_name_no_task_manager() -> None:
    assert lost_data_connection("ValueError: bad record 'TaskManager 1.2.3.4:5'") is None
    assert lost_data_connection("") is None


def test_both_signals_give_the_same_headline() -> None:
    heartbeat = task_manager_lost_message("tm-1", 4242, "it sent no heartbeat within the heartbeat timeout")
    reset = task_manager_lost_message("tm-1", 4242, "task 'Map (1/2)' lost its data connection to it")
    assert heartbeat.startswith("TaskManager tm-1 (pid 4242) was lost: ")
    assert reset.startswith("TaskManager tm-1 (pid 4242) was lost: ")


def test_the_job_master_reports_a_reset_connection_as_its_task_manager_lost() -> None:
    from strom import StreamExecutionEnvironment
    from strom.graph.execution_graph import SlotAssignment
    from strom.runtime.deployment import TaskExecutionState
    from strom.runtime.execution_state import ExecutionState
    from strom.runtime.jobmaster.jobmaster import JobMaster
    from strom.runtime.resourcemanager.resource_manager import ResourceManager

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.from_sequence(0, 10).map(lambda x: x).rebalance().add_sink(lambda v: None)
    job_graph = env.get_job_graph()
    text = _read_loop_error(ConnectionResetError(104, "Connection reset by peer")).replace("40123", "40121")

    async def run() -> tuple[str, str]:
        rm = ResourceManager(secret=b"s" * 32, heartbeat_interval=1.0, heartbeat_timeout=5.0)
        jm = JobMaster(job_graph, rm, slot_timeout=1.0)
        jm.graph.transition_state(jm.graph.state.RUNNING)
        executions = list(jm.graph.all_executions())
        for i, ex in enumerate(executions):  # subtask i of every vertex on TaskManager tm-i
            index = ex.vertex.subtask_index
            ex.slot = SlotAssignment(
                tm_id=f"tm-{index}", slot_index=0, allocation_id=f"a{i}", data_address=("10.0.0.7", 40120 + index)
            )
            ex.state = ExecutionState.RUNNING
            ex.pid = 4200 + index
        consumer = executions[-1]
        jm.update_task_execution_state(
            TaskExecutionState(
                job_id=jm.job_id,
                execution_attempt_id=consumer.attempt_id,
                state=ExecutionState.FAILED.value,
                error_text=f"Traceback (most recent call last):\nstrom.exceptions.ClusterError: {text}",
                error=ClusterError(text),
            )
        )
        jm.task_group.close()
        jm.task_group.cancel()
        return jm.exception_history[-1].text, jm.graph.failure_text or ""

    history, failure = asyncio.run(run())
    assert history.startswith("TaskManager tm-1 (pid 4201) was lost: task '")
    assert "lost its data connection to it" in history
    assert failure.startswith("TaskManager tm-1 (pid 4201) was lost: ")
