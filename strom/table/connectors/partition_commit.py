"""Partition commit of the ``filesystem`` table sink (Flink's ``PartitionCommitter`` with its
``PartitionCommitTrigger`` s, ``PartitionTimeExtractor`` and ``PartitionCommitPolicy`` s).

A partitioned streaming sink with ``sink.partition-commit.policy.kind`` writes through strom's exactly-once FileSink
and, once a checkpoint is complete, tells downstream readers which partitions are done:

* the writers (one per subtask) hand each checkpoint their part files plus a :class:`PartitionCommitInfo`: the
  partitions that got files in it, the subtask's watermark, whether its input ended;
* one :class:`~strom.api.sink.GlobalCommitter` on the JobManager commits the files (renames them into place) and
  keeps the partitions pending until the trigger says they are done:
  ``sink.partition-commit.trigger`` = ``process-time`` (the default) commits a partition once the committer's clock
  passed the moment it first saw it plus ``sink.partition-commit.delay``; ``partition-time`` once the smallest
  watermark of all subtasks passed the time extracted from the partition's values
  (``partition.time-extractor.timestamp-pattern``, e.g. ``'$dt $hr:00:00'``; default: the first partition value)
  plus the delay (Flink's ``watermark > partition time + delay``, in ``sink.partition-commit.watermark-time-zone``);
  at the end of a bounded input every pending partition commits;
* committing runs the policies: ``success-file`` writes an empty ``_SUCCESS``
  (``sink.partition-commit.success-file.name``) into the partition's directory. Writing it again is harmless, so
  a committer that sees a checkpoint's partitions again after a failover stays correct.

With partition commit every part rolls at every checkpoint (a partition's data is complete in the files the
checkpoint commits). The ``metastore`` policy needs a Hive metastore; strom has none: it is refused with a hint.
Departure from Flink: the pending partitions live in the JobManager's committer (they survive TaskManager
failures; a JobManager restart forgets them until their partitions get new files).
"""

from __future__ import annotations

import datetime
import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from strom.api.sink import (
    CommitRequest,
    GlobalCommitter,
    GlobalCommittingSink,
    SinkWriterContext,
)
from strom.connectors.file_system import fs as fsspec_urls
from strom.connectors.file_system.file_committer import FileCommittable, FileCommitter
from strom.runtime.operators.global_committer import GlobalCommitSinkWriterOperator
from strom.table.connectors.delegating_file_writer import DelegatingFileWriter
from strom.table.connectors.partition_path import unescape_path_name
from strom.table.errors import ValidationException

if TYPE_CHECKING:
    from strom.api.datastream import DataStream
    from strom.connectors.file_system.sink import FileSink

__all__ = [
    "PartitionCommitInfo",
    "PartitionCommitOptions",
    "PartitionCommitSink",
    "PartitionTimeExtractor",
    "add_partition_commit_sink",
]

log = logging.getLogger(__name__)

LONG_MAX = 2**63 - 1


@dataclass(frozen=True, slots=True)
class PartitionCommitInfo:
    """What one subtask tells the committer at a checkpoint (Flink's ``PartitionCommitInfo``)."""

    subtask: int
    parallelism: int
    watermark: int | None
    partitions: tuple[str, ...]  # bucket ids: ``dt=2024-01-01/hr=10``
    end_of_input: bool = False


class PartitionTimeExtractor:
    """Flink's ``DefaultPartTimeExtractor``: ``$name`` in the pattern replaced by the partition's values, parsed by
    ``formatter`` (Java letters ``yyyy MM dd HH mm ss``; default ``yyyy-MM-dd HH:mm:ss``, which also takes a bare
    ``yyyy-MM-dd``)."""

    def __init__(self, names: Sequence[str], pattern: str | None, formatter: str | None) -> None:
        self.names = tuple(names)
        self.pattern = pattern
        self.formatter = formatter
        self.strptime = _strptime(formatter) if formatter else None

    def extract(self, values: dict[str, str]) -> datetime.datetime:
        if self.pattern is None:
            text = values[self.names[0]]
        else:
            text = re.sub(r"\$(\w+)", lambda m: values.get(m.group(1), m.group(0)), self.pattern)
        try:
            if self.strptime is not None:
                return datetime.datetime.strptime(text, self.strptime)
            return datetime.datetime.fromisoformat(text.strip())
        except ValueError:
            raise ValidationException(
                f"expected a partition time like 'yyyy-MM-dd HH:mm:ss' from the partition {values}; got {text!r}; "
                "hint: set 'partition.time-extractor.timestamp-pattern', e.g. '$dt $hr:00:00'"
            ) from None


def _strptime(formatter: str) -> str:
    out = formatter
    for java, python in (("yyyy", "%Y"), ("MM", "%m"), ("dd", "%d"), ("HH", "%H"), ("mm", "%M"), ("ss", "%S")):
        out = out.replace(java, python)
    if re.search(r"[A-Za-z]", re.sub(r"%[YmdHMS]", "", out)):
        raise ValidationException(
            f"expected 'partition.time-extractor.timestamp-formatter' of the letters yyyy MM dd HH mm ss; got "
            f"{formatter!r}; hint: 'yyyy-MM-dd HH:mm:ss' (the default)"
        )
    return out


@dataclass(frozen=True, slots=True)
class PartitionCommitOptions:
    trigger: str  # process-time | partition-time
    delay_ms: int
    success_file_name: str
    extractor: PartitionTimeExtractor
    time_zone: str = "UTC"


class PartitionCommitSink(GlobalCommittingSink[Any, Any]):
    """A FileSink whose committables and partition infos go to one committer on the JobManager."""

    def __init__(self, files: FileSink, options: PartitionCommitOptions) -> None:
        self.files = files
        self.options = options

    def validate(self) -> None:
        self.files.validate()

    def create_writer(self, context: SinkWriterContext) -> _PartitionCommitWriter:
        return _PartitionCommitWriter(self.files.create_writer(context), context)

    def restore_writer(self, context: SinkWriterContext, recovered_state: list[Any]) -> _PartitionCommitWriter:
        return _PartitionCommitWriter(self.files.restore_writer(context, recovered_state), context)

    def create_global_committer(self) -> GlobalCommitter[Any]:
        return _PartitionCommitter(self.files.base_path, self.files.storage_options, self.options)


class _PartitionCommitWriter(DelegatingFileWriter):
    """The FileSink's writer, plus the partitions its committables fall into and the subtask's watermark."""

    def __init__(self, inner: Any, context: SinkWriterContext) -> None:
        super().__init__(inner, context.subtask_index)
        self.parallelism = context.parallelism
        self.watermark: int | None = None
        self.base = inner.directory.rstrip("/") + "/"

    def prepare_commit(self) -> list[Any]:
        files: list[Any] = list(self.inner.prepare_commit())
        partitions = sorted({self._bucket(c) for c in files if isinstance(c, FileCommittable)})
        watermark = LONG_MAX if self.ended else self.watermark
        return [*files, PartitionCommitInfo(self.subtask, self.parallelism, watermark, tuple(partitions), self.ended)]

    def _bucket(self, c: FileCommittable) -> str:
        directory = c.final_path.rsplit("/", 1)[0]
        return directory[len(self.base) :] if directory.startswith(self.base) else directory


class _PartitionCommitter(GlobalCommitter[Any]):
    """Commits the files, then the partitions whose trigger fired (see the module docstring)."""

    def __init__(
        self,
        base_path: str,
        storage_options: dict[str, Any],
        options: PartitionCommitOptions,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.base_path = base_path.rstrip("/")
        self.storage_options = storage_options
        self.options = options
        self.clock = clock
        self.files = FileCommitter(storage_options)
        self.pending: dict[str, float] = {}  # partition -> when the committer first saw it (ms)
        self.watermarks: dict[int, int | None] = {}
        self.parallelism = 0
        self.ended: set[int] = set()
        self.committed: list[str] = []  # in commit order (tests and logs)

    def commit(self, checkpoint_id: int, committables: list[Any]) -> None:
        files = [CommitRequest(c) for c in committables if isinstance(c, FileCommittable)]
        if files:
            self.files.commit(files)
        now = self.clock() * 1000
        for info in committables:
            if not isinstance(info, PartitionCommitInfo):
                continue
            self.parallelism = max(self.parallelism, info.parallelism)
            if info.watermark is not None:
                old = self.watermarks.get(info.subtask)
                self.watermarks[info.subtask] = info.watermark if old is None else max(old, info.watermark)
            if info.end_of_input:
                self.ended.add(info.subtask)
            for partition in info.partitions:
                self.pending.setdefault(partition, now)
        for partition in sorted(p for p in self.pending if self._due(p, now)):
            self._commit_partition(partition)
            del self.pending[partition]

    def _due(self, partition: str, now: float) -> bool:
        if self.parallelism and len(self.ended) >= self.parallelism:
            return True
        delay = self.options.delay_ms
        if self.options.trigger == "process-time":
            return now >= self.pending[partition] + delay
        if not self.parallelism or any(self.watermarks.get(s) is None for s in range(self.parallelism)):
            return False
        watermark = min(w for w in self.watermarks.values() if w is not None)
        values = dict(unescape_pair(part) for part in partition.split("/") if "=" in part)
        moment = self.options.extractor.extract(values).replace(tzinfo=ZoneInfo(self.options.time_zone))
        return watermark > int(moment.timestamp() * 1000) + delay

    def _commit_partition(self, partition: str) -> None:
        path = f"{self.base_path}/{partition}/{self.options.success_file_name}"
        fs, fs_path = fsspec_urls.resolve(path, self.storage_options, role="partition success file")
        fs.makedirs(fs_path.rsplit("/", 1)[0], exist_ok=True)
        fs.pipe_file(fs_path, b"")  # an empty marker file
        self.committed.append(partition)
        log.info("committed the partition %s (%s)", partition, self.options.success_file_name)


def unescape_pair(part: str) -> tuple[str, str]:
    name, _, value = part.partition("=")
    return name, unescape_path_name(value)


class _PartitionCommitWriterOperator(GlobalCommitSinkWriterOperator):
    """The sink's writer operator: hands the watermarks it gets to the writer (for the partition-time trigger)."""

    def process_watermark(self, timestamp: int) -> None:
        writer = self._writer
        if isinstance(writer, _PartitionCommitWriter):
            writer.watermark = timestamp
        super().process_watermark(timestamp)


def add_partition_commit_sink(stream: DataStream[Any], sink: PartitionCommitSink) -> Any:
    """``stream.sink_to(sink)`` with the writer operator that sees watermarks."""
    return stream._sink("Sink: filesystem", _PartitionCommitWriterOperator(sink))
