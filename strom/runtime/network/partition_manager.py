"""``ResultPartitionManager``: the TaskManager's registry of the partitions its tasks produce.

Consumers may ask for a subpartition before its producer task has registered the partition (all tasks
of a streaming job deploy at once), or before a blocking partition is finished (consumable); such requests wait here
and are answered on registration (pipelined) or when the producer finished writing (blocking), or with an error when
the partition is released. A pipelined subpartition is read once and forgotten when all are consumed; a blocking
partition gives every request a new reader of its file and stays until released (by the JobMaster, or at the job's
end). Thread-safe: tasks register from their threads, the network server asks from the event loop.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from strom.exceptions import ClusterError
from strom.runtime.network.result_partition import PartitionReleasedError, ResultPartition, ResultPartitionID
from strom.runtime.network.result_subpartition_view import ResultSubpartitionView

__all__ = ["ResultPartitionManager", "SubpartitionCallback"]

SubpartitionCallback = Callable[[ResultSubpartitionView | None, BaseException | None], None]


class ResultPartitionManager:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._partitions: dict[ResultPartitionID, ResultPartition] = {}
        self._pending: dict[ResultPartitionID, list[tuple[int, SubpartitionCallback]]] = {}
        self._released: dict[ResultPartitionID, str] = {}

    def register_result_partition(self, partition: ResultPartition) -> None:
        with self._lock:
            self._partitions[partition.partition_id] = partition
            waiting = self._pending.pop(partition.partition_id, []) if partition.is_consumable() else []
        for index, cb in waiting:
            self._answer(partition, index, cb)

    def partition_finished(self, partition: ResultPartition) -> None:
        """A blocking partition was written completely: answer the requests that waited for it."""
        with self._lock:
            waiting = self._pending.pop(partition.partition_id, [])
        for index, cb in waiting:
            self._answer(partition, index, cb)

    def request_local(self, partition_id: ResultPartitionID, index: int, callback: SubpartitionCallback) -> None:
        """Answer ``callback(view, None)`` now or once consumable; ``(None, error)`` if released."""
        with self._lock:
            partition = self._partitions.get(partition_id)
            cause = self._released.get(partition_id)
            if cause is None and (partition is None or not partition.is_consumable()):
                self._pending.setdefault(partition_id, []).append((index, callback))
                return
        if partition is not None:
            self._answer(partition, index, callback)
        else:
            callback(None, ClusterError(f"partition {partition_id} was released: {cause}"))

    @staticmethod
    def _answer(partition: ResultPartition, index: int, callback: SubpartitionCallback) -> None:
        if not 0 <= index < len(partition.subpartitions):
            callback(None, ClusterError(f"partition {partition.partition_id} has no subpartition {index}"))
            return
        try:
            view = partition.create_subpartition_view(index)
        except (PartitionReleasedError, OSError) as exc:
            callback(None, ClusterError(f"partition {partition.partition_id} cannot be read: {exc}"))
            return
        callback(view, None)

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
        """Every subpartition of a pipelined partition was read to its end: forget the partition."""
        with self._lock:
            self._partitions.pop(partition.partition_id, None)

    def has_partition(self, partition_id: ResultPartitionID) -> bool:
        """Whether ``partition_id`` is registered here and not released (a blocking partition still on disk)."""
        with self._lock:
            return partition_id in self._partitions

    def num_partitions(self) -> int:
        with self._lock:
            return len(self._partitions)
