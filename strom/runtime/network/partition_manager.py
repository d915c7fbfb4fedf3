"""``ResultPartitionManager``: the TaskManager's registry of the partitions its tasks produce.

Consumers may ask for a subpartition before its producer task has registered the partition (all tasks
of a streaming job deploy at once); such requests wait here and are answered on registration, or with
an error when the job's partitions are released. Thread-safe: tasks register from their threads,
the network server asks from the event loop.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from strom.exceptions import ClusterError
from strom.runtime.network.result_partition import (
    PipelinedSubpartition,
    ResultPartition,
    ResultPartitionID,
)

__all__ = ["ResultPartitionManager", "SubpartitionCallback"]

SubpartitionCallback = Callable[[PipelinedSubpartition | None, BaseException | None], None]


class ResultPartitionManager:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._partitions: dict[ResultPartitionID, ResultPartition] = {}
        self._pending: dict[ResultPartitionID, list[tuple[int, SubpartitionCallback]]] = {}
        self._released: dict[ResultPartitionID, str] = {}

    def register_result_partition(self, partition: ResultPartition) -> None:
        with self._lock:
            self._partitions[partition.partition_id] = partition
            waiting = self._pending.pop(partition.partition_id, [])
        for index, cb in waiting:
            cb(partition.subpartitions[index], None)

    def request_local(self, partition_id: ResultPartitionID, index: int, callback: SubpartitionCallback) -> None:
        """Answer ``callback(subpartition, None)`` now or once registered; ``(None, error)`` if released."""
        with self._lock:
            partition = self._partitions.get(partition_id)
            cause = self._released.get(partition_id)
            if partition is None and cause is None:
                self._pending.setdefault(partition_id, []).append((index, callback))
                return
        if partition is not None:
            if not 0 <= index < len(partition.subpartitions):
                callback(None, ClusterError(f"partition {partition_id} has no subpartition {index}"))
                return
            callback(partition.subpartitions[index], None)
        else:
            callback(None, ClusterError(f"partition {partition_id} was released: {cause}"))

    def release_partition(self, partition_id: ResultPartitionID, cause: str) -> None:
        with self._lock:
            partition = self._partitions.pop(partition_id, None)
            self._released[partition_id] = cause
            waiting = self._pending.pop(partition_id, [])
        if partition is not None:
            partition.release(cause)
        for _, cb in waiting:
            cb(None, ClusterError(f"partition {partition_id} was released: {cause}"))

    def release_partitions_of_attempts(self, attempt_ids: set[str], cause: str) -> None:
        with self._lock:
            ids = [p for p in list(self._partitions) + list(self._pending) if p.attempt_id in attempt_ids]
        for pid in ids:
            self.release_partition(pid, cause)

    def on_consumed(self, partition: ResultPartition) -> None:
        """Every subpartition was read to its end: forget the partition."""
        with self._lock:
            self._partitions.pop(partition.partition_id, None)

    def num_partitions(self) -> int:
        with self._lock:
            return len(self._partitions)
