"""``DefaultScheduler``: slots for every subtask, then deploy them all (seed 003: ``allocateSlotsAndDeploy`` →
``waitForAllSlotsAndDeploy`` → ``deployAll`` → ``Execution.deploy`` → ``TaskExecutor.submit_task``) — or, for a job
with blocking exchanges, its pipelined regions stage after stage
(:mod:`strom.runtime.scheduler.pipelined_region_scheduler`).

Slot sharing: the subtasks ``i`` of all vertices of one slot-sharing group share slot ``i`` of that group,
so a group needs as many slots as its largest parallelism (as Flink).

With local recovery (``state.backend.local-recovery``) a restarted job asks for slot ``i`` of a group on the
TaskManager (resource id) its subtasks ``i`` ran on last (Flink's ``PreviousAllocationSlotSelectionStrategy``).
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import cloudpickle

from strom.graph.execution_graph import Execution, ExecutionGraph, SlotAssignment
from strom.graph.job_graph import JobGraph
from strom.runtime.deployment import (
    CheckpointingSettings,
    InputChannelDeploymentDescriptor,
    InputGateDeploymentDescriptor,
    OperatorRestoreDescriptor,
    ResultPartitionDeploymentDescriptor,
    TaskDeploymentDescriptor,
)
from strom.runtime.execution_state import ExecutionState
from strom.runtime.network.result_partition import ResultPartitionID
from strom.runtime.resourcemanager.resource_manager import ResourceManager

if TYPE_CHECKING:
    from strom.runtime.scheduler.pipelined_region_scheduler import PipelinedRegionScheduler

__all__ = ["DefaultScheduler", "slots_required"]


def slots_required(job_graph: JobGraph) -> int:
    groups: dict[str, int] = defaultdict(int)
    for v in job_graph.vertices.values():
        groups[v.slot_sharing_group] = max(groups[v.slot_sharing_group], v.parallelism)
    return sum(groups.values())


class DefaultScheduler:
    def __init__(self, graph: ExecutionGraph, resource_manager: ResourceManager, *, slot_timeout: float) -> None:
        self.graph = graph
        self.rm = resource_manager
        self.slot_timeout = slot_timeout
        self.checkpointing: CheckpointingSettings | None = None
        #: the client's temporary directory, when nothing restores the job's output without the client
        self.temporary_dir = ""
        #: the state each operator of an execution restores (the JobMaster's latest completed checkpoint)
        self.restore_provider: Callable[[Execution], dict[str, OperatorRestoreDescriptor] | None] = lambda ex: None
        #: a job with blocking exchanges (BATCH): its regions are scheduled stage after stage instead of all at once
        self.region_scheduler: PipelinedRegionScheduler | None = None

    async def allocate_slots_and_deploy(self) -> None:
        if self.region_scheduler is not None:
            await self.region_scheduler.start()
            return
        jg = self.graph.job_graph
        groups: dict[str, int] = defaultdict(int)
        for v in jg.vertices.values():
            groups[v.slot_sharing_group] = max(groups[v.slot_sharing_group], v.parallelism)
        for waiting in self.graph.all_executions():  # waiting for slots is SCHEDULED (Flink's pending requests)
            if waiting.state is ExecutionState.CREATED:
                waiting.transition(ExecutionState.SCHEDULED)
        preferred = self.previous_locations(groups) if self.local_recovery else []
        offers = await self.rm.request_slots(self.graph.job_id, sum(groups.values()), self.slot_timeout, preferred)
        by_group: dict[str, list[Any]] = {}
        pos = 0
        for group, n in groups.items():
            by_group[group] = offers[pos : pos + n]
            pos += n
        for ejv in self.graph.job_vertices.values():
            group_slots = by_group[ejv.job_vertex.slot_sharing_group]
            for ev in ejv.task_vertices:
                o = group_slots[ev.subtask_index]
                ex = ev.current_execution
                assert ex is not None
                ex.slot = SlotAssignment(
                    tm_id=o.tm_id,
                    slot_index=o.slot_index,
                    allocation_id=o.allocation_id,
                    data_address=o.data_address,
                    resource_id=o.resource_id,
                )
        await self.deploy_all()

    @property
    def local_recovery(self) -> bool:
        return self.checkpointing is not None and self.checkpointing.local_recovery

    def previous_locations(self, groups: dict[str, int]) -> list[str]:
        """Per slot to request (``groups``: slot-sharing group → slots, in request order): the resource id its
        subtasks' latest attempts with a slot ran on ("" where none did)."""
        last: dict[tuple[str, int], str] = {}
        for ex in self.graph.executions.values():  # in creation order: a later attempt overwrites an earlier
            if ex.slot is not None and ex.slot.resource_id:
                group = ex.vertex.job_vertex.job_vertex.slot_sharing_group
                last[(group, ex.vertex.subtask_index)] = ex.slot.resource_id
        return [last.get((group, i), "") for group, n in groups.items() for i in range(n)]

    async def deploy_all(self) -> None:
        executions = self.graph.all_executions()
        calls = []
        for ex in executions:
            if ex.state is not ExecutionState.SCHEDULED or ex.slot is None:
                continue  # not to deploy, or still waiting for its slot
            tdd = self.create_deployment_descriptor(ex)
            ex.transition(ExecutionState.DEPLOYING)
            assert ex.slot is not None
            calls.append(self.rm.gateway(ex.slot.tm_id).call("submit_task", tdd, timeout=30.0))
        await asyncio.gather(*calls)

    def create_deployment_descriptor(self, ex: Execution) -> TaskDeploymentDescriptor:
        ev = ex.vertex
        jv = ev.job_vertex.job_vertex
        jg = self.graph.job_graph
        assert ex.slot is not None
        produced = []
        for edge in jv.outputs:
            produced.append(
                ResultPartitionDeploymentDescriptor(
                    result_id=edge.result_id,
                    partition_id=ResultPartitionID(edge.result_id, ev.subtask_index, ex.attempt_id),
                    num_subpartitions=ev.produced[edge.result_id],
                    serialized_partitioner=cloudpickle.dumps(edge.partitioner, protocol=5),
                    serialized_serializer=cloudpickle.dumps(edge.serializer, protocol=5),
                    consumer=jg.vertices[edge.target_vertex_id].operator_names[0],
                    partition_type=edge.partition_type,
                )
            )
        gates = []
        for result_id, channels in ev.inputs:
            descriptors = []
            for producer_subtask, subpartition in channels:
                producer = self.graph.producer_execution(result_id, producer_subtask)
                assert producer.slot is not None
                descriptors.append(
                    InputChannelDeploymentDescriptor(
                        partition_id=ResultPartitionID(result_id, producer_subtask, producer.attempt_id),
                        subpartition_index=subpartition,
                        producer_tm_id=producer.slot.tm_id,
                        producer_data_address=producer.slot.data_address,
                    )
                )
            in_edge = next(e for e in jv.inputs if e.result_id == result_id)
            gates.append(
                InputGateDeploymentDescriptor(
                    result_id=result_id,
                    channels=tuple(descriptors),
                    serialized_serializer=cloudpickle.dumps(in_edge.serializer, protocol=5),
                    type_number=in_edge.type_number,
                )
            )
        return TaskDeploymentDescriptor(
            job_id=jg.job_id,
            job_name=jg.job_name,
            vertex_id=jv.id,
            task_name=jv.name,
            subtask_index=ev.subtask_index,
            parallelism=jv.parallelism,
            max_parallelism=jv.max_parallelism,
            attempt_number=ex.attempt_number,
            execution_attempt_id=ex.attempt_id,
            allocation_id=ex.slot.allocation_id,
            chain=tuple(jv.chain),
            produced_partitions=tuple(produced),
            input_gates=tuple(gates),
            config=dict(jg.config),
            checkpointing=self.checkpointing,
            temporary_dir=self.temporary_dir,
            restore=self.restore_provider(ex),
        )
