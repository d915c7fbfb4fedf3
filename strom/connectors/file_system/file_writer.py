"""``FileWriter``: the writer of a FileSink subtask — one open part file per active bucket (Flink's
``FileWriter`` with its ``FileWriterBucket`` s).

Records go to the bucket their :class:`BucketAssigner` names (``<base>/<bucket id>/``); each bucket has at
most one open part, ``.<prefix>-<writer id>-<n><suffix>.inprogress``, encoded row by row (an
:class:`Encoder`) or by a :class:`BulkWriter`. A part rolls — is finished, made durable and closed, and
becomes a pending :class:`FileCommittable` — when the :class:`RollingPolicy` says so before records are
appended, when the writer's processing-time check finds it too old or inactive (a timer on the task's
``ProcessingTimeService`` every ``bucket_check_interval_ms``: no new records are needed), at a checkpoint
when the policy's ``should_roll_on_checkpoint`` says so, at every savepoint and at end of input. Buckets
without an open part are forgotten. Names never collide across subtasks, attempts and restores (each writer
has a random id); a part is never empty.

**In-progress parts across checkpoints** (Flink's ``FileWriterBucketState`` with its in-progress recoverable):
a row-format part on a local filesystem whose policy does not roll it at a checkpoint (``DefaultRollingPolicy``)
stays open; the checkpoint flushes and ``fsync`` s it and records it in the writer state (bucket, hidden and
final name, durable size, age). After a restore the recorded part is truncated to the recorded size and
*resumed* — appended to under its name until the policy rolls it — as Flink's resumable local writer does;
the records after the checkpoint are replayed by the sources. When a rescale hands the states of two writers
with a part in the same bucket to one subtask, one part is resumed and the other, truncated, rolls and is
committed with the next checkpoint (Flink's bucket merge). A part a checkpoint recorded is never deleted by
``close`` or a restore's sweep; everything else written after the restored checkpoint is. Bulk formats (a
footer ends a part) and object stores (no truncate or append: ``s3://`` …) roll every part at every
checkpoint, whatever the policy; so do savepoints, which must stay whole once the job goes on appending.
"""

from __future__ import annotations

import contextlib
import os
import reprlib
import time
import uuid
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, BinaryIO

from strom.api.sink import PrecommittingSinkWriter, StatefulSinkWriter
from strom.connectors.file_system.bucket_assigners import (
    BasePathBucketAssigner,
    BucketAssigner,
    BucketAssignerContext,
)
from strom.connectors.file_system.bulk_writer import BulkWriter, BulkWriterFactory
from strom.connectors.file_system.compaction import (
    CompactionBuckets,
    FileCompactor,
    FileCompactStrategy,
    WaitingPart,
    write_compacted,
)
from strom.connectors.file_system.encoders import Encoder
from strom.connectors.file_system.file_committer import FileCommittable
from strom.connectors.file_system.output_file_config import OutputFileConfig
from strom.connectors.file_system.owner_markers import (
    IN_PROGRESS,
    mark,
    remove_abandoned_parts,
    uncommitted_parts,
    unmark,
)
from strom.connectors.file_system.recoverable_writer import LocalRecoverableWriter, RecoverableWriter
from strom.connectors.file_system.rolling_policy import PartFileInfo, RollingPolicy
from strom.exceptions import InvalidProgramError

if TYPE_CHECKING:
    from strom.runtime.rpc.heartbeat import Clock
    from strom.runtime.tasks.processing_time_service import ProcessingTimeService

__all__ = ["FileWriter", "FileWriterBucketState", "FileWriterState"]


@dataclass(frozen=True, slots=True, kw_only=True)
class FileWriterBucketState:
    """An in-progress part a checkpoint keeps open (Flink's ``FileWriterBucketState``): resumed after a restore."""

    bucket_id: str
    #: the part's hidden name (``pending_path``) and final name
    part: FileCommittable
    #: the writer id in the part's name (its owner marker's, for jobs checkpointing into a client's directory)
    writer_id: str
    #: the durable size at the checkpoint: a restore truncates the part to it
    size: int
    #: the part's age at the checkpoint (ms): the rollover interval counts on from it
    age_ms: float


@dataclass(frozen=True, slots=True, kw_only=True)
class FileWriterState:
    """What a checkpoint keeps of a writer: its id, so a restore can delete the writer's dead parts, and its
    in-progress parts to resume."""

    writer_id: str
    in_progress: tuple[FileWriterBucketState, ...] = ()
    #: rolled parts waiting for compaction (:mod:`.compaction`), and the checkpoints since the last one
    waiting: tuple[WaitingPart, ...] = ()
    checkpoints_since_compaction: int = 0


class _PartFile:
    """An open part (Flink's ``InProgressFileWriter``)."""

    __slots__ = ("bulk", "info", "part", "path", "recorded", "stream", "writer_id")

    def __init__(self, path: str, part: FileCommittable, stream: BinaryIO, info: PartFileInfo, writer_id: str) -> None:
        self.path = path  # on the writer's filesystem
        self.part = part
        self.stream = stream
        self.info = info
        self.writer_id = writer_id  # the one in its name
        self.bulk: BulkWriter | None = None
        #: a checkpoint's state references the part (taken or restored): close() and sweeps keep its file
        self.recorded = False


class FileWriter(PrecommittingSinkWriter[Any, FileCommittable], StatefulSinkWriter[Any, FileWriterState]):
    def __init__(
        self,
        *,
        directory: str,
        output_file_config: OutputFileConfig,
        rolling_policy: RollingPolicy,
        encoder: Encoder[Any] | None = None,
        bulk_writer_factory: BulkWriterFactory | None = None,
        bucket_assigner: BucketAssigner | None = None,
        storage: RecoverableWriter | None = None,
        clock: Clock | None = None,
        recovered_state: list[Any] | None = None,
        temporary_checkpoint_dir: str = "",
        processing_time_service: ProcessingTimeService | None = None,
        bucket_check_interval_ms: int = 60_000,
        compaction: tuple[FileCompactStrategy, FileCompactor] | None = None,
    ) -> None:
        if (encoder is None) == (bulk_writer_factory is None):
            raise InvalidProgramError(
                "a FileWriter expects either an encoder or a bulk writer factory; got "
                f"{'both' if encoder is not None else 'neither'}; hint: FileSink.for_row_format or for_bulk_format"
            )
        self.directory = directory
        self.storage = storage or LocalRecoverableWriter()
        self.encoder = encoder
        self.bulk_writer_factory = bulk_writer_factory
        self.config = output_file_config
        self.policy = rolling_policy
        self.assigner = bucket_assigner or BasePathBucketAssigner()
        self._single_bucket = type(self.assigner) is BasePathBucketAssigner
        self._context = BucketAssignerContext()
        self._now = clock.monotonic if clock is not None else time.monotonic
        self.writer_id = str(uuid.uuid4())
        #: the job checkpoints into this temporary directory of its client: mark the parts with it
        self.temporary_checkpoint_dir = temporary_checkpoint_dir
        self._marked = False  # the owner marker of ``writer_id`` exists
        #: row parts may stay open across checkpoints (resumed after a restore)
        self._resumable = self.storage.supports_resume and encoder is not None
        if self.storage.is_local:
            os.makedirs(directory, exist_ok=True)
        remove_abandoned_parts(directory, self.storage)
        recovered = [s for s in recovered_state or () if isinstance(s, FileWriterState)]
        in_progress = [b for s in recovered for b in getattr(s, "in_progress", ())]
        waiting = [w for s in recovered for w in getattr(s, "waiting", ())]
        #: owner markers of restored writers whose in-progress or waiting parts this writer took over
        self._adopted: set[str] = {b.writer_id for b in in_progress} | {w.writer_id for w in waiting}
        if recovered:
            spared = {self._path_of(b.part.pending_path) for b in in_progress}
            spared |= {self._path_of(w.committable.pending_path) for w in waiting}
            self._delete_dead_parts({s.writer_id for s in recovered}, spared)
        self._next_part = 0
        self._parts: dict[str, _PartFile] = {}  # bucket id -> its open part
        self._directories: dict[str, str] = {}  # bucket id -> its directory (checked once)
        self._marked_directories: set[str] = set()  # where parts of a marked writer id may be left
        self._rolled: list[_PartFile] = []  # closed parts not yet handed to a checkpoint
        self._recorded: set[str] = set()  # the paths among them that a checkpoint's state references
        self._pass_through: list[FileCommittable] = []  # restored waiting parts, compaction disabled since
        self._closed = False
        self._compactor = compaction[1] if compaction is not None else None
        self._compaction = CompactionBuckets(compaction[0]) if compaction is not None else None
        self._compact_all = False  # at the next prepare_commit (a savepoint, end of input)
        for bucket_state in in_progress:
            self._resume(bucket_state)
        for w in waiting:  # without compaction now: committed with the next checkpoint
            if self._compaction is not None:
                self._compaction.add(w)
            else:
                self._pass_through.append(w.committable)
        if self._compaction is not None:
            counts = [getattr(s, "checkpoints_since_compaction", 0) for s in recovered]
            self._compaction.checkpoints = max(counts, default=0)
        self._timers = processing_time_service
        self._check_interval_ms = bucket_check_interval_ms
        if processing_time_service is not None:
            now = processing_time_service.get_current_processing_time()
            processing_time_service.register_timer(now + bucket_check_interval_ms, self._on_timer)

    # -- records -------------------------------------------------------------------------------------
    def write(self, element: Any) -> None:
        self.write_batch([element])

    def write_batch(self, elements: list[Any]) -> None:
        if not elements:
            return
        if self._single_bucket:
            self._write("", elements)
            return
        ids = self.assigner.get_bucket_ids(elements, self._context)
        first = ids[0]
        if ids.count(first) == len(ids):
            self._write(first, elements)
            return
        groups: dict[str, list[Any]] = {}
        for bucket_id, e in zip(ids, elements, strict=True):
            groups.setdefault(bucket_id, []).append(e)
        for bucket_id, group in groups.items():
            self._write(bucket_id, group)

    def _write(self, bucket_id: str, elements: list[Any]) -> None:
        if self.encoder is None:
            self._write_bulk(bucket_id, elements)
            return
        data = self.encoder.encode_batch(elements)
        if not data:
            return
        now = self._now_ms()
        part = self._parts.get(bucket_id)
        info = part.info if part is not None else PartFileInfo(bucket_id, now, now, 0)
        if not self.policy.should_roll_on_event(info, len(data), now):
            self._append(bucket_id, part, elements, data, now)
        elif len(elements) == 1:
            if part is not None:
                self._roll(bucket_id)
            self._append(bucket_id, None, elements, data, now)
        else:  # the batch does not fit into the open part: roll at record boundaries
            for e in elements:
                self._write(bucket_id, [e])

    def _append(self, bucket_id: str, part: _PartFile | None, elements: list[Any], data: bytes, now: float) -> None:
        if part is None:
            part = self._open_part(bucket_id, elements[0], now)
        part.stream.write(data)
        part.info.size += len(data)
        part.info.last_update_time = now

    def _write_bulk(self, bucket_id: str, elements: list[Any]) -> None:
        now = self._now_ms()
        part = self._parts.get(bucket_id)
        if part is not None and self.policy.should_roll_on_event(part.info, 0, now):
            self._roll(bucket_id)
            part = None
        if part is None:
            part = self._open_part(bucket_id, elements[0], now)
        assert part.bulk is not None
        part.bulk.add_elements(elements)
        part.info.size = part.stream.tell()
        part.info.last_update_time = now

    def _now_ms(self) -> float:
        return self._now() * 1000.0

    # -- part files ----------------------------------------------------------------------------------
    def _bucket_directory(self, bucket_id: str, element: Any) -> str:
        directory = self._directories.get(bucket_id)
        if directory is None:
            _check_bucket_id(bucket_id, element)
            directory = self.storage.join(self.directory, bucket_id) if bucket_id else self.directory
            self._directories[bucket_id] = directory
        return directory

    def _new_part(self, directory: str) -> tuple[str, FileCommittable]:
        """The hidden path and committable of this writer's next part in ``directory`` (marked if need be)."""
        if self.temporary_checkpoint_dir and not self._marked:
            mark(self.storage, self.directory, self.writer_id, self._parts_lead(), self.temporary_checkpoint_dir)
            self._marked = True
        if self._marked:
            self._marked_directories.add(directory)
        n = self._next_part
        self._next_part += 1
        name = f"{self.config.part_prefix}-{self.writer_id}-{n}{self.config.part_suffix}"
        path = self.storage.join(directory, f".{name}{IN_PROGRESS}")
        committable = FileCommittable(
            pending_path=self.storage.url(path), final_path=self.storage.url(self.storage.join(directory, name))
        )
        return path, committable

    def _open_part(self, bucket_id: str, element: Any, now: float) -> _PartFile:
        path, committable = self._new_part(self._bucket_directory(bucket_id, element))
        stream = self.storage.open(path)
        part = _PartFile(path, committable, stream, PartFileInfo(bucket_id, now, now, 0), self.writer_id)
        self._parts[bucket_id] = part  # before the bulk writer: close() discards it if creating that fails
        if self.bulk_writer_factory is not None:
            part.bulk = self.bulk_writer_factory.create(stream)
        return part

    def _roll(self, bucket_id: str) -> None:
        self._finish(self._parts.pop(bucket_id))

    def _finish(self, part: _PartFile) -> None:
        """Close a part for commit: pending, handed to the next ``prepare_commit``."""
        if part.bulk is not None:
            try:
                part.bulk.finish()
            except BaseException:
                part.bulk.discard()
                self.storage.discard(part.stream, part.path)
                raise
        self.storage.close_for_commit(part.stream)
        self._rolled.append(part)
        if part.recorded:
            self._recorded.add(part.path)

    def on_processing_time(self) -> None:
        """Roll the parts the policy finds too old or inactive (called by the writer's timer)."""
        now = self._now_ms()
        for bucket_id, part in list(self._parts.items()):
            if self.policy.should_roll_on_processing_time(part.info, now):
                self._roll(bucket_id)

    def _on_timer(self, time_ms: int) -> None:
        if self._closed or self._timers is None:
            return
        self.on_processing_time()
        self._timers.register_timer(time_ms + self._check_interval_ms, self._on_timer)

    # -- checkpoints ---------------------------------------------------------------------------------
    def flush(self, end_of_input: bool) -> None:
        if end_of_input:  # the last prepare_commit follows: every part rolls, every waiting part is compacted
            self._roll_all()
            return
        for part in self._parts.values():
            if part.bulk is None:
                part.stream.flush()

    def prepare_commit(self) -> list[FileCommittable]:
        for bucket_id, part in list(self._parts.items()):
            if not self._resumable or self.policy.should_roll_on_checkpoint(part.info):
                self._roll(bucket_id)
        if len(self._directories) > 1024:  # date-time buckets: forget those of the past
            self._directories.clear()
        rolled, self._rolled = self._rolled, []
        self._recorded.clear()
        out, self._pass_through = self._pass_through, []
        if self._compaction is None:
            out.extend(p.part for p in rolled)
            return out
        for p in rolled:
            size = self.storage.size(p.path)
            self._compaction.add(
                WaitingPart(bucket_id=p.info.bucket_id, committable=p.part, size=size, writer_id=p.writer_id)
            )
        everything, self._compact_all = self._compact_all, False
        out.extend(self._compact(group) for group in self._compaction.due(everything))
        return out

    def _compact(self, group: list[WaitingPart]) -> FileCommittable:
        """One part of the waiting parts of a bucket (:mod:`.compaction`); a single part as it is."""
        if len(group) == 1:
            return group[0].committable
        assert self._compactor is not None
        sources = [self._path_of(w.committable.pending_path) for w in group]
        directory = os.path.dirname(sources[0]) if self.storage.is_local else sources[0].rsplit("/", 1)[0]
        path, committable = self._new_part(directory)
        write_compacted(self.storage, self._compactor, sources, path)
        return replace(committable, compacted_from=tuple(w.committable.pending_path for w in group))

    def snapshot_state(self, checkpoint_id: int) -> list[FileWriterState]:
        """The writer's id and its open parts, made durable (only resumable parts are open at a checkpoint)."""
        now = self._now_ms()
        in_progress = []
        for bucket_id, part in self._parts.items():
            size = self.storage.persist(part.stream)
            part.recorded = True
            in_progress.append(
                FileWriterBucketState(
                    bucket_id=bucket_id,
                    part=part.part,
                    writer_id=part.writer_id,
                    size=size,
                    age_ms=now - part.info.creation_time,
                )
            )
        c = self._compaction
        return [
            FileWriterState(
                writer_id=self.writer_id,
                in_progress=tuple(in_progress),
                waiting=tuple(c.all_waiting()) if c is not None else (),
                checkpoints_since_compaction=c.checkpoints if c is not None else 0,
            )
        ]

    def prepare_savepoint(self, checkpoint_id: int) -> None:
        """A savepoint references no in-progress part (it may be restored after the job appended to one, and
        must survive the client): every open part rolls into it, and every waiting part is compacted."""
        self._roll_all()

    def _roll_all(self) -> None:
        for bucket_id in list(self._parts):
            self._roll(bucket_id)
        self._compact_all = True

    def on_savepoint_snapshot(self, checkpoint_id: int) -> None:
        """The parts just handed to savepoint ``checkpoint_id`` must outlive the client: unmark them, and go on
        under a fresh writer id (whose parts get a marker of their own). Every part of the old id — and of the
        restored writers whose parts this one resumed — is in the savepoint: ``prepare_savepoint`` rolled them."""
        waiting = self._compaction is not None and self._compaction.waiting
        if not (self._marked or self._adopted) or self._parts or self._rolled or waiting:
            return
        for writer_id in self._adopted:
            unmark(self.storage, self.directory, writer_id)
        self._adopted.clear()
        if self._marked:
            unmark(self.storage, self.directory, self.writer_id)
            self.writer_id = str(uuid.uuid4())
            self._marked = False
            self._marked_directories.clear()

    def close(self) -> None:
        """Drop what no checkpoint references: the open parts and parts rolled since the last checkpoint, but
        for the parts a checkpoint recorded in progress (a restore resumes them); and the owner markers once no
        part of their writers is left uncommitted."""
        self._closed = True
        parts, self._parts = list(self._parts.values()), {}
        dead, self._rolled = self._rolled, []
        errors: list[BaseException] = []
        for part in parts:
            try:
                if part.recorded:
                    part.stream.close()
                    continue
                if part.bulk is not None:
                    part.bulk.discard()
                self.storage.discard(part.stream, part.path)
            except Exception as exc:
                errors.append(exc)
        for p in dead:
            path = p.path
            if path not in self._recorded:
                with contextlib.suppress(FileNotFoundError):
                    self.storage.delete(path)
        directories = self._marked_directories | {self.directory}
        owners = self._adopted | ({self.writer_id} if self._marked else set())
        for writer_id in owners:
            if not uncommitted_parts(self.storage, directories, self._parts_lead(writer_id)):
                unmark(self.storage, self.directory, writer_id)
        if errors:
            raise errors[0]

    # -- restore -------------------------------------------------------------------------------------
    def _parts_lead(self, writer_id: str | None = None) -> str:
        return f".{self.config.part_prefix}-{writer_id or self.writer_id}-"

    def _resume(self, state: FileWriterBucketState) -> None:
        """Reopen a part the restored checkpoint recorded, truncated to its recorded size; a second part of the
        same bucket (states merged by a rescale) rolls instead, for the next checkpoint (Flink's bucket merge)."""
        path = self._path_of(state.part.pending_path)
        stream = self.storage.resume(path, state.size)
        now = self._now_ms()
        info = PartFileInfo(state.bucket_id, now - state.age_ms, now, state.size)
        part = _PartFile(path, state.part, stream, info, state.writer_id)
        part.recorded = True
        self._marked_directories.add(os.path.dirname(path) if self.storage.is_local else path.rsplit("/", 1)[0])
        if state.bucket_id in self._parts:
            self._finish(part)
        else:
            self._parts[state.bucket_id] = part

    def _path_of(self, url: str) -> str:
        if self.storage.is_local:
            return url
        return url.split("://", 1)[1] if "://" in url else url

    def _delete_dead_parts(self, writer_ids: set[str], spared: set[str]) -> None:
        """Delete the in-progress and pending parts of the restored checkpoint's writers, in every bucket, but
        for the in-progress parts it recorded (``spared``: resumed next, truncated to their recorded size). Its
        committables were committed before this writer was created, so whatever other uncommitted part of those
        writers is left holds records written after the checkpoint, which the sources replay."""
        if not writer_ids:
            return
        lead = f".{self.config.part_prefix}-"
        for directory, name in list(self.storage.walk(self.directory)):
            dead = name.startswith(lead) and name.endswith(IN_PROGRESS)
            rest = name[len(lead) :]
            if dead and any(rest.startswith(f"{writer_id}-") for writer_id in writer_ids):
                path = self.storage.join(directory, name)
                if path not in spared:
                    self.storage.delete(path)
        for writer_id in writer_ids - self._adopted:  # nothing of theirs is left to sweep
            unmark(self.storage, self.directory, writer_id)


def _check_bucket_id(bucket_id: Any, element: Any) -> None:
    if (
        isinstance(bucket_id, str)
        and "\\" not in bucket_id
        and "\0" not in bucket_id
        and (bucket_id == "" or all(c not in ("", ".", "..") for c in bucket_id.split("/")))
    ):
        return
    raise InvalidProgramError(
        f"expected a bucket id that is a relative path of non-empty components without '.' or '..'; got "
        f"{bucket_id!r} for the record {reprlib.repr(element)}; hint: return '' for the base path itself, "
        "'a/b' to nest"
    )
