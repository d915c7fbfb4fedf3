"""Deployment descriptors: everything a TaskExecutor needs to run one subtask (Flink's
``TaskDeploymentDescriptor`` with its result-partition and input-gate descriptors).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from strom.runtime.network.result_partition import ResultPartitionID
from strom.runtime.network.result_partition_type import ResultPartitionType

__all__ = [
    "CheckpointingSettings",
    "InputChannelDeploymentDescriptor",
    "InputGateDeploymentDescriptor",
    "OperatorRestoreDescriptor",
    "RescaledChannel",
    "ResultPartitionDeploymentDescriptor",
    "TaskDeploymentDescriptor",
    "TaskExecutionState",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class ResultPartitionDeploymentDescriptor:
    result_id: str
    partition_id: ResultPartitionID
    num_subpartitions: int
    serialized_partitioner: bytes
    serialized_serializer: bytes
    #: the name of the operator that consumes this partition (the head of the downstream chain), for errors
    consumer: str = ""
    partition_type: ResultPartitionType = ResultPartitionType.PIPELINED


@dataclass(frozen=True, slots=True, kw_only=True)
class InputChannelDeploymentDescriptor:
    partition_id: ResultPartitionID
    subpartition_index: int
    producer_tm_id: str
    producer_data_address: tuple[str, int]


@dataclass(frozen=True, slots=True, kw_only=True)
class InputGateDeploymentDescriptor:
    result_id: str
    channels: tuple[InputChannelDeploymentDescriptor, ...]
    serialized_serializer: bytes
    type_number: int = 0  # the input of a two-input task it feeds (1 or 2); 0: one input


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointingSettings:
    """Whether and how the job checkpoints, as its tasks need to know."""

    exactly_once: bool = True
    #: ``state.backend.local-recovery``: keep a local copy of each checkpoint, restore from it where it matches
    local_recovery: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class RescaledChannel:
    """One old channel (producer → consumer) of an unaligned checkpoint whose in-flight data a subtask restored at
    another parallelism takes (a piece of Flink's ``InflightDataRescalingDescriptor``): the old consumer's buffers of
    ``consumer_channel``, then the old producer's of ``producer_key`` (partition, subpartition); on a keyed edge only
    the records whose key group the subtask owns now (``serialized_filter``: the edge's partitioner)."""

    logical_input: int  # the input of the head operator the records feed (0, or 1 for a two-input task's second)
    consumer_state: Any  # StateHandle of the old consumer's channel state, or None
    consumer_channel: int
    producer_state: Any  # StateHandle of the old producer's channel state, or None
    producer_key: tuple[int, int]
    serialized_filter: bytes | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class OperatorRestoreDescriptor:
    """Where one operator of a restored subtask finds its state (Flink's ``JobManagerTaskRestore`` /
    ``TaskStateSnapshot`` for one operator): the state handles of the key groups it owns now and the
    operator-state handles of every old subtask (``None`` where one had none)."""

    checkpoint_id: int
    keyed: tuple[tuple[int, Any], ...] = ()  # (key group, StateHandle)
    operator: tuple[Any, ...] = ()  # StateHandle | None per old subtask
    old_parallelism: int = 1
    channel: Any = None  # StateHandle of this subtask's in-flight buffers (unaligned checkpoint, head operator)
    #: restored at another parallelism: the old channels whose in-flight data this subtask takes (``channel`` None)
    rescaled_channels: tuple[RescaledChannel, ...] = ()
    #: keyed state as incremental RocksDB checkpoints: the old subtasks' IncrementalRemoteKeyedStateHandles whose
    #: key groups overlap this subtask's (instead of ``keyed``)
    incremental: tuple[Any, ...] = ()
    #: whether the restored backend may reference the shared files of ``incremental`` in its next checkpoints (the
    #: job's own checkpoint, or restore mode CLAIM); False: its first checkpoint uploads every file
    reuse_shared: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskDeploymentDescriptor:
    job_id: str
    job_name: str
    vertex_id: str
    task_name: str
    subtask_index: int
    parallelism: int
    max_parallelism: int
    attempt_number: int
    execution_attempt_id: str
    allocation_id: str
    chain: tuple[Any, ...]  # ChainedOperatorConfig, operators still serialized
    produced_partitions: tuple[ResultPartitionDeploymentDescriptor, ...]
    input_gates: tuple[InputGateDeploymentDescriptor, ...]
    config: dict[str, Any]
    checkpointing: CheckpointingSettings | None = None  # None: the job does not checkpoint
    restore: dict[str, OperatorRestoreDescriptor] | None = None  # operator id -> its state; None: fresh start
    #: the client's temporary directory when nothing restores the job's output once the client is gone (no
    #: checkpointing, or checkpoints in that directory): a FileSink marks its parts with it; ``""`` otherwise
    temporary_dir: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskExecutionState:
    """A task attempt's state change, reported by its TaskExecutor to the JobMaster."""

    job_id: str
    execution_attempt_id: str
    state: str  # ExecutionState.value
    error_text: str = ""  # message (with the user's traceback) when FAILED
    error: BaseException | None = None
    pid: int = 0
    #: the task's I/O metrics at its end, sent with a terminal state: a task that ends between two heartbeats
    #: still shows its final record and byte counts (None: not terminal, or not sampled)
    metrics: dict[str, float] | None = None
