"""File compaction of a FileSink: many small rolled parts merged into one before they are committed (Flink's
``FileCompactStrategy``, ``FileCompactor``, ``ConcatFileCompactor``, and its ``CompactCoordinator`` /
``CompactorOperator`` pair).

    sink = (
        FileSink.for_bulk_format("/data/out", ParquetBulkWriters.for_schema(schema))
        .enable_compact(
            FileCompactStrategy.Builder.new_builder()
            .set_size_threshold(64 * 1024 * 1024)
            .enable_compaction_on_checkpoint(10)
            .build(),
            FileCompactor.parquet_file_compactor(),  # FileCompactor.concat_file_compactor() for row formats
        )
        .build()
    )

With compaction the parts a checkpoint rolls are not committed at once: they wait, hidden, in the writer's
state, bucket by bucket (:class:`CompactionBuckets`, the pure core). A bucket is compacted when its waiting
parts reach the size threshold, or every ``n`` checkpoints (``enable_compaction_on_checkpoint``), and at
savepoints and end of input (Flink fires the coordinator then too). Compacting writes one new hidden part — the
compactor reads every waiting part and writes them into it, made durable — whose committable replaces the
inputs' (Flink's semantics); a bucket with a single waiting part commits it as it is. The committable names its
inputs, which the committer deletes once the compacted part has its final name.

Exactly-once as without compaction: the compaction happens in ``prepare_commit``, before the checkpoint's
snapshot; the checkpoint records either the waiting inputs (in the writer state) or the compacted part with
its inputs (a committable). A restore from a checkpoint before the compaction finds the inputs (still hidden,
spared by the sweep) and compacts again; the compacted part of the failed attempt is swept as any part written
after the checkpoint. A restore from the checkpoint after it commits the compacted part again — idempotent —
and deletes the inputs that are left.

Departures from Flink: parts are compacted per writer (subtask), not by one coordinator across subtasks; the
compaction runs on the task thread at the checkpoint (``set_num_compact_threads`` is accepted and ignored).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO, ClassVar

from strom.connectors.file_system.file_committer import FileCommittable
from strom.exceptions import ConnectorError, InvalidProgramError

if TYPE_CHECKING:
    from strom.connectors.file_system.recoverable_writer import RecoverableWriter

__all__ = [
    "CompactionBuckets",
    "ConcatFileCompactor",
    "FileCompactStrategy",
    "FileCompactor",
    "ParquetFileCompactor",
    "WaitingPart",
    "write_compacted",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class FileCompactStrategy:
    """When to compact (Flink's ``FileCompactStrategy``): once a bucket's waiting parts reach
    ``size_threshold`` bytes, and/or every ``num_checkpoints_before_compaction`` checkpoints (-1: not)."""

    #: PyFlink's ``FileCompactStrategy.Builder.new_builder()``
    Builder: ClassVar[type[FileCompactStrategyBuilder]]

    size_threshold: int = -1
    num_checkpoints_before_compaction: int = -1
    num_compact_threads: int = 1

    def __post_init__(self) -> None:
        if self.size_threshold <= 0 and self.num_checkpoints_before_compaction <= 0:
            raise InvalidProgramError(
                "a FileCompactStrategy expects a size threshold or a number of checkpoints; got neither; hint: "
                "FileCompactStrategy.Builder.new_builder().enable_compaction_on_checkpoint(5).build()"
            )

    def get_size_threshold(self) -> int:
        return self.size_threshold

    def get_num_checkpoints_before_compaction(self) -> int:
        return self.num_checkpoints_before_compaction

    def get_num_compact_threads(self) -> int:
        return self.num_compact_threads

    @staticmethod
    def builder() -> FileCompactStrategyBuilder:
        return FileCompactStrategyBuilder()


@dataclass(slots=True)
class FileCompactStrategyBuilder:
    """Flink's ``FileCompactStrategy.Builder`` (``FileCompactStrategy.Builder.new_builder()`` in PyFlink)."""

    _size_threshold: int = -1
    _num_checkpoints: int = -1
    _threads: int = 1

    @staticmethod
    def new_builder() -> FileCompactStrategyBuilder:
        return FileCompactStrategyBuilder()

    def enable_compaction_on_checkpoint(self, num_checkpoints_before_compaction: int) -> FileCompactStrategyBuilder:
        _positive("enable_compaction_on_checkpoint", num_checkpoints_before_compaction)
        self._num_checkpoints = num_checkpoints_before_compaction
        return self

    def set_size_threshold(self, size_threshold: int) -> FileCompactStrategyBuilder:
        _positive("set_size_threshold", size_threshold)
        self._size_threshold = size_threshold
        return self

    def set_num_compact_threads(self, num_compact_threads: int) -> FileCompactStrategyBuilder:
        _positive("set_num_compact_threads", num_compact_threads)
        self._threads = num_compact_threads
        return self

    def build(self) -> FileCompactStrategy:
        return FileCompactStrategy(
            size_threshold=self._size_threshold,
            num_checkpoints_before_compaction=self._num_checkpoints,
            num_compact_threads=self._threads,
        )


FileCompactStrategy.Builder = FileCompactStrategyBuilder


class FileCompactor(ABC):
    """Merges parts into one (Flink's ``OutputStreamBasedFileCompactor``)."""

    @abstractmethod
    def compact(self, inputs: list[BinaryIO], output: BinaryIO) -> None:
        """Write the content of every input into ``output`` (do not close it)."""

    @staticmethod
    def concat_file_compactor(file_delimiter: bytes | None = None) -> ConcatFileCompactor:
        """Flink's ``ConcatFileCompactor``: the inputs' bytes one after the other (row formats), with
        ``file_delimiter`` between them if given."""
        return ConcatFileCompactor(file_delimiter)

    @staticmethod
    def parquet_file_compactor() -> ParquetFileCompactor:
        """strom's: Parquet parts merged into one Parquet file (their row groups, one schema)."""
        return ParquetFileCompactor()


class ConcatFileCompactor(FileCompactor):
    def __init__(self, file_delimiter: bytes | None = None) -> None:
        if file_delimiter is not None and not isinstance(file_delimiter, bytes):
            raise InvalidProgramError(
                f"concat_file_compactor expects a bytes delimiter; got a {type(file_delimiter).__name__!r}; "
                "hint: b'\\n'"
            )
        self.file_delimiter = file_delimiter

    def compact(self, inputs: list[BinaryIO], output: BinaryIO) -> None:
        for i, f in enumerate(inputs):
            if i and self.file_delimiter:
                output.write(self.file_delimiter)
            while chunk := f.read(1 << 20):
                output.write(chunk)


class ParquetFileCompactor(FileCompactor):
    def compact(self, inputs: list[BinaryIO], output: BinaryIO) -> None:
        try:
            import pyarrow.parquet as pq
        except ImportError:  # pragma: no cover - pyarrow comes with the parquet extra
            raise ConnectorError("the Parquet compactor expects pyarrow; got none; hint: pip install pyarrow") from None
        writer: Any = None
        try:
            for f in inputs:
                parquet = pq.ParquetFile(f)
                if writer is None:
                    writer = pq.ParquetWriter(output, parquet.schema_arrow)
                for i in range(parquet.num_row_groups):
                    writer.write_table(parquet.read_row_group(i))
        finally:
            if writer is not None:
                writer.close()


@dataclass(frozen=True, slots=True, kw_only=True)
class WaitingPart:
    """A rolled part waiting for compaction, as the writer state keeps it."""

    bucket_id: str
    committable: FileCommittable
    size: int
    #: the writer id in the part's name (its owner marker's)
    writer_id: str


@dataclass(slots=True)
class CompactionBuckets:
    """The pure core of compaction (Flink's ``CompactCoordinator``): which waiting parts to compact at a
    checkpoint. ``add`` the parts rolled since the last checkpoint; ``due(everything)`` takes out, per bucket,
    the parts to compact now."""

    strategy: FileCompactStrategy
    waiting: dict[str, list[WaitingPart]] = field(default_factory=dict)
    checkpoints: int = 0  # checkpoints since the last compaction on checkpoints

    def add(self, part: WaitingPart) -> None:
        self.waiting.setdefault(part.bucket_id, []).append(part)

    def due(self, everything: bool) -> list[list[WaitingPart]]:
        """At a checkpoint: the groups of parts to compact (one per bucket), removed from the waiting ones."""
        n = self.strategy.num_checkpoints_before_compaction
        self.checkpoints += 1
        on_checkpoint = n > 0 and self.checkpoints >= n
        if on_checkpoint:
            self.checkpoints = 0
        threshold = self.strategy.size_threshold
        out = []
        for bucket_id, parts in list(self.waiting.items()):
            if everything or on_checkpoint or (threshold > 0 and sum(p.size for p in parts) >= threshold):
                out.append(self.waiting.pop(bucket_id))
        return out

    def all_waiting(self) -> list[WaitingPart]:
        return [p for parts in self.waiting.values() for p in parts]

    def validate(self) -> None:
        assert all(parts and all(p.bucket_id == b for p in parts) for b, parts in self.waiting.items())


def write_compacted(storage: RecoverableWriter, compactor: FileCompactor, sources: list[str], target: str) -> None:
    """Write the parts at ``sources`` into a new part at ``target``, made durable and closed (a failure removes
    it; the sources stay)."""
    stream = storage.open(target)
    inputs: list[BinaryIO] = []
    try:
        for path in sources:
            inputs.append(storage.open_for_reading(path))
        compactor.compact(inputs, stream)
    except BaseException:
        storage.discard(stream, target)
        raise
    finally:
        for f in inputs:
            f.close()
    storage.close_for_commit(stream)


def _positive(what: str, value: object) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise InvalidProgramError(f"{what} expects a positive int; got {value!r}; hint: 5")
