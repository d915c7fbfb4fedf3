"""``INSERT OVERWRITE`` of the ``filesystem`` table sink: Flink's ``FileSystemCommitter`` / ``PartitionLoader``
with ``overwrite`` (BATCH mode only, as Flink).

The job writes through strom's FileSink as an INSERT INTO does (hidden in-progress parts). At the end of the input
one :class:`~strom.api.sink.GlobalCommitter` on the JobManager first deletes the visible files that were there
before — of the whole table directory for a table without partitions (also when nothing was written, as Flink), of
each partition directory that got new files otherwise (partitions not written keep their files, as Flink's dynamic
and static overwrite) — then gives the new parts their names. Files the committer itself committed are never deleted,
so a repeated commit after a failover is harmless; hidden files (``.…``, ``_…``) stay.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from strom.api.sink import (
    CommitRequest,
    GlobalCommitter,
    GlobalCommittingSink,
    SinkWriterContext,
)
from strom.connectors.file_system import fs as fsspec_urls
from strom.connectors.file_system.file_committer import FileCommittable, FileCommitter
from strom.table.connectors.delegating_file_writer import DelegatingFileWriter

if TYPE_CHECKING:
    from strom.connectors.file_system.sink import FileSink

__all__ = ["OverwriteFileSink"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class WriterEnded:
    """A writer's marker beside its last committables: the commit runs even when no file was written."""

    subtask: int


class OverwriteFileSink(GlobalCommittingSink[Any, Any]):
    """A FileSink whose parts replace the files of the directories they are written into."""

    def __init__(self, files: FileSink, partitioned: bool) -> None:
        self.files = files
        self.partitioned = partitioned

    def validate(self) -> None:
        self.files.validate()

    def create_writer(self, context: SinkWriterContext) -> _OverwriteWriter:
        return _OverwriteWriter(self.files.create_writer(context), context.subtask_index)

    def restore_writer(self, context: SinkWriterContext, recovered_state: list[Any]) -> _OverwriteWriter:
        return _OverwriteWriter(self.files.restore_writer(context, recovered_state), context.subtask_index)

    def create_global_committer(self) -> GlobalCommitter[Any]:
        return _OverwriteCommitter(self.files.base_path, self.files.storage_options, self.partitioned)


class _OverwriteWriter(DelegatingFileWriter):
    def prepare_commit(self) -> list[Any]:
        files: list[Any] = list(self.inner.prepare_commit())
        return [*files, WriterEnded(self.subtask)] if self.ended else files


class _OverwriteCommitter(GlobalCommitter[Any]):
    def __init__(self, base_path: str, storage_options: dict[str, Any], partitioned: bool) -> None:
        self.base_path = base_path.rstrip("/")
        self.storage_options = storage_options
        self.partitioned = partitioned
        self.files = FileCommitter(storage_options)
        self.cleared: set[str] = set()  # directories whose old files are gone
        self.written: set[str] = set()  # the parts this job committed

    def commit(self, checkpoint_id: int, committables: list[Any]) -> None:
        parts = [c for c in committables if isinstance(c, FileCommittable)]
        directories = {c.final_path.rsplit("/", 1)[0] for c in parts}
        if not self.partitioned and (parts or any(isinstance(c, WriterEnded) for c in committables)):
            directories = {self.base_path}
        for directory in sorted(directories - self.cleared):
            self._clear(directory)
            self.cleared.add(directory)
        if parts:
            self.files.commit([CommitRequest(c) for c in parts])
            self.written.update(c.final_path for c in parts)

    def _clear(self, directory: str) -> None:
        fs, fs_path = fsspec_urls.resolve(directory, self.storage_options, role="overwritten directory")
        if not fs.exists(fs_path):
            return
        for entry in fs.ls(fs_path, detail=True):
            name = str(entry["name"]).rstrip("/").rsplit("/", 1)[-1]
            if entry.get("type") != "file" or name.startswith((".", "_")):
                continue
            full = f"{directory}/{name}"
            if full not in self.written:
                fs.rm_file(entry["name"])
                log.info("INSERT OVERWRITE removed %s", full)
