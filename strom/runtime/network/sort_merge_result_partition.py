"""``SortMergeResultPartition``: a BLOCKING result partition written to one local file (Flink's sort-merge shuffle),
and ``SortMergeSubpartitionReader``, the view a consumer reads it through.

The producer serializes each buffer as it emits it and keeps it in a bounded in-memory *sort buffer*, grouped by
subpartition (Flink's ``SortBuffer``). When the buffer holds ``taskmanager.network.sort-shuffle.min-buffers`` ×
``taskmanager.memory.segment-size`` bytes it is *spilled*: written to the partition's data file as one region,
subpartition by subpartition (:mod:`strom.runtime.network.partitioned_file`), compressed with
``taskmanager.network.compression.codec`` (LZ4 by default) unless
``taskmanager.network.batch-shuffle.compression.enabled`` is off. Events (the end of data, the final watermark) go
into every subpartition in their place. :meth:`SortMergeResultPartition.finish` spills the rest and writes the index:
from then on the partition is *consumable*, and the TaskManager's partition manager answers the requests that waited.

A blocking partition never blocks its writer (there is no consumer to wait for: memory is bounded by the sort
buffer), and it outlives its producer task: it is read by as many consumers, as many times, as the job needs — a
consumer that fails re-reads it — until the JobMaster releases it or the job ends (its files are deleted then).

Each request gets a new :class:`SortMergeSubpartitionReader`: local consumers read it on their task thread, remote
ones through the data server, which sends a buffer per credit and announces the backlog from the index.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from collections.abc import Callable
from typing import Any

from strom.api.serialization import BatchSerializer
from strom.exceptions import TaskCancelledError
from strom.runtime.network.events import END_OF_PARTITION, EndOfPartitionEvent, RuntimeEvent
from strom.runtime.network.partitioned_file import (
    DATA_BUFFER,
    EVENT_BUFFER,
    PartitionedFile,
    PartitionedFileReader,
    PartitionedFileWriter,
)
from strom.runtime.network.result_partition import (
    PartitionReleasedError,
    ResultPartition,
    ResultPartitionID,
    SerializedBatch,
)

__all__ = ["SortMergeResultPartition", "SortMergeSubpartitionReader", "shuffle_directory", "task_manager_shuffle_root"]


def task_manager_shuffle_root(tmp_dirs: str, tm_id: str) -> str:
    """The directory of one TaskManager process's partition files under ``io.tmp.dirs`` (the first one listed; the
    system's temporary directory when none is)."""
    first = tmp_dirs.replace(";", ",").split(",")[0].strip() if tmp_dirs else ""
    return os.path.join(first or tempfile.gettempdir(), f"strom-shuffle-{tm_id}-{os.getpid()}")


def shuffle_directory(tmp_dirs: str, tm_id: str, job_id: str) -> str:
    """Where a TaskManager writes the blocking partitions of one job."""
    return os.path.join(task_manager_shuffle_root(tmp_dirs, tm_id), job_id)


class SortMergeResultPartition(ResultPartition):
    """A blocking partition: buffers sorted by subpartition in memory, spilled to one data file plus its index."""

    is_blocking = True

    def __init__(
        self,
        partition_id: ResultPartitionID,
        num_subpartitions: int,
        *,
        directory: str,
        sort_buffer_bytes: int,
        compress: bool,
        codec: str = "LZ4",
        serializer: BatchSerializer | None = None,
        on_finished: Callable[[ResultPartition], None] | None = None,
    ) -> None:
        super().__init__(
            partition_id, num_subpartitions, pool_size=1, max_buffers_per_subpartition=1, serializer=serializer
        )
        if sort_buffer_bytes < 1:
            raise ValueError(f"expected a sort buffer of at least 1 byte; got {sort_buffer_bytes}")
        name = f"{partition_id.result_id}-{partition_id.producer_subtask}-{partition_id.attempt_id}"
        self.base_path = os.path.join(directory, name)
        self.sort_buffer_bytes = sort_buffer_bytes
        self.compress = compress
        self.codec = codec
        self._on_finished = on_finished
        self._sorted: list[list[tuple[int, bytes]]] = [[] for _ in range(num_subpartitions)]
        self._sorted_bytes = 0
        self._writer: PartitionedFileWriter | None = None
        self.file: PartitionedFile | None = None
        self.finished = False
        self.num_spills = 0
        self.num_buffers = 0
        self.bytes_on_disk = 0  # the data file's size once finished

    # -- producer (task thread) ---------------------------------------------------------------------
    def emit(self, subpartition: int, batch: list[Any]) -> None:
        data = self.serialize(batch)
        self._sorted[subpartition].append((DATA_BUFFER, data))
        self._sorted_bytes += len(data)
        self.num_bytes_out += len(data)  # what the task produced (the task's numBytesOut), before compression
        if self._sorted_bytes >= self.sort_buffer_bytes:
            self._spill()

    def broadcast_event(self, event: RuntimeEvent) -> None:
        if isinstance(event, EndOfPartitionEvent):
            return  # the reader ends each subpartition itself, after its last buffer
        payload = pickle.dumps(event, protocol=5)
        for group in self._sorted:
            group.append((EVENT_BUFFER, payload))
        self._sorted_bytes += len(payload) * len(self._sorted)
        if self._sorted_bytes >= self.sort_buffer_bytes:
            self._spill()

    def _spill(self) -> None:
        """Write the sort buffer as one region of the data file."""
        with self._cond:
            if self.released:  # cancelled: the task ends CANCELED, as a writer of a released pipelined partition
                raise TaskCancelledError(f"partition {self.partition_id} released: {self.release_cause}")
            if self._writer is None:
                self._writer = PartitionedFileWriter(
                    self.base_path, len(self._sorted), compress=self.compress, codec=self.codec
                )
            self._writer.write_region(self._sorted)
        self.num_buffers += sum(len(g) for g in self._sorted)
        self.num_spills += 1
        self._sorted = [[] for _ in self._sorted]
        self._sorted_bytes = 0

    def finish(self) -> None:
        """The producer's output is complete: spill the rest, write the index; consumers may read from now on."""
        self._spill()
        with self._cond:
            if self.released:
                raise TaskCancelledError(f"partition {self.partition_id} released: {self.release_cause}")
            assert self._writer is not None
            self.file = self._writer.finish()
            self.bytes_on_disk = self._writer.bytes_written
            self._writer = None
            self.finished = True
        if self._on_finished is not None:
            self._on_finished(self)

    # -- consumers --------------------------------------------------------------------------------------
    def is_consumable(self) -> bool:
        return self.finished and not self.released

    def create_subpartition_view(self, index: int) -> SortMergeSubpartitionReader:
        with self._cond:
            if self.released:
                raise PartitionReleasedError(self.release_cause)
            assert self.file is not None, "a blocking partition is read only once finished"
            return SortMergeSubpartitionReader(self, index, self.file.reader(index))

    def buffers_in_use(self) -> int:
        return 0

    def release(self, cause: str) -> None:
        """Delete the partition's files (the job ended, or the JobMaster released it); readers fail from now on."""
        with self._cond:
            if self.released:
                return
            self.released = True
            self.release_cause = cause
            writer, self._writer = self._writer, None
            self._sorted = [[] for _ in self._sorted]
        if writer is not None:
            writer.abort()
        PartitionedFile.delete_files(self.base_path)


class SortMergeSubpartitionReader:
    """One consumer's view of one subpartition of a finished :class:`SortMergeResultPartition` (Flink's
    ``SortMergeSubpartitionReader``): the buffers of that subpartition, region after region, then the end of the
    partition. Data buffers come as :class:`SerializedBatch` (the bytes the producer's serializer wrote), so the data
    server sends them as they are and a local channel deserializes them."""

    __slots__ = (
        "_done",
        "_next",
        "_partition",
        "_reader",
        "consumed",
        "index",
        "listener",
        "priority_listener",
        "remote",
    )

    def __init__(self, partition: SortMergeResultPartition, index: int, reader: PartitionedFileReader) -> None:
        self._partition = partition
        self.index = index
        self._reader = reader
        self._next: tuple[int, bytes] | None = None
        self._done = False
        self.consumed = False
        self.listener: Callable[[], None] | None = None
        self.priority_listener: Callable[[], None] | None = None
        self.remote = False

    @property
    def partition(self) -> ResultPartition:
        return self._partition

    def _peek(self) -> tuple[int, bytes] | None:
        if self._next is None and not self._done:
            self._next = self._reader.next_buffer()
        return self._next

    def poll(self) -> Any | None:
        if self._partition.released:
            self._reader.close()
            raise PartitionReleasedError(self._partition.release_cause)
        if self._done:
            return None
        entry = self._peek()
        self._next = None
        if entry is None:
            self._done = self.consumed = True
            self._reader.close()
            return END_OF_PARTITION
        kind, payload = entry
        if kind == DATA_BUFFER:
            return SerializedBatch(payload, 0)
        return pickle.loads(payload)  # an event this TaskManager's producer wrote

    def poll_priority(self) -> Any | None:
        return None  # no checkpoints in BATCH execution: nothing overtakes

    def head_is_event(self) -> bool:
        if self._done or self._partition.released:
            return False
        entry = self._peek()
        return entry is None or entry[0] == EVENT_BUFFER

    def backlog(self) -> int:
        """Data (and event) buffers still to read: the index knows them all."""
        return self._reader.remaining + (1 if self._next is not None else 0)

    def is_available(self) -> bool:
        return not self._done or self._partition.released

    def take_converted(self, checkpoint_id: int) -> list[Any]:
        return []

    def convert_to_priority(self, checkpoint_id: int) -> None:
        return None
