"""``FileSink``: exactly-once row-format files on a local (or locally mounted) filesystem (Flink's ``FileSink``).

    sink = (
        FileSink.for_row_format("/tmp/out", JsonLinesEncoder())
        .with_output_file_config(OutputFileConfig(part_prefix="events", part_suffix=".jsonl"))
        .with_rolling_policy(DefaultRollingPolicy(max_part_size_bytes=64 * 1024 * 1024))
        .build()
    )
    stream.sink_to(sink)

Each writer (one per subtask and attempt, with a random id) appends encoded records to a hidden in-progress
part file ``<base>/.<prefix>-<writer id>-<n><suffix>.inprogress``. At every checkpoint — and when the part
grows past ``max_part_size_bytes`` or gets older than ``rollover_interval_ms`` — the part is flushed,
fsync'd and closed; at the checkpoint it becomes a :class:`FileCommittable`, still under its hidden name.
Once the checkpoint is complete the committer renames it to ``<base>/<prefix>-<writer id>-<n><suffix>``
(``os.replace``, atomic). Commits are idempotent: a part already renamed is skipped.

Nothing uncommitted is ever visible under a final name. On restore, the in-progress files of the writers
recorded in the restored checkpoint that no committable of it references (records written after that
checkpoint, to be replayed) are deleted. Without checkpointing the parts are committed at end of input
(Flink's BATCH mode). Several subtasks share the base directory; names never collide across subtasks, attempts
and restores. Rolling on size or age is checked when records arrive (no timers), and a part is never empty.

Uncommitted parts are kept only where a later run could restore them. A job without
``execution.checkpointing.dir`` checkpoints into its client's temporary directory, which nothing restores once
that client is gone, and a job without checkpointing commits only at end of input; the writers of both name the
client's temporary directory (whose owner lock tells whether the client lives) in an owner marker
``<base>/.strom-owner-<writer id>`` beside their parts. The client's cluster removes the in-progress and pending
parts of those markers, then the markers, when it closes (a cancelled or failed job's pending parts); when the
client was killed, the next strom run on the machine does (when its cluster starts, whatever job it runs), or the
next writer into the same base path, whichever comes first. Never removed: anything while its client lives (a
failover restores and commits it), committed parts, files strom did not write, parts marked on another host, the
parts a savepoint references (the writer drops its marker at a savepoint and goes on under a fresh id), and the
parts of jobs with configured checkpoint storage — there, in-progress files of attempts that never completed a
checkpoint stay behind as hidden leftovers, as in Flink.
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import hashlib
import io
import json
import os
import socket
import time
import urllib.parse
import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, BinaryIO, Generic, TypeVar

from strom.api.sink import (
    CommitRequest,
    Committer,
    PrecommittingSinkWriter,
    SinkWriterContext,
    StatefulSinkWriter,
    TwoPhaseCommittingSink,
)
from strom.exceptions import InvalidProgramError, SerializationError, StromError
from strom.runtime.checkpoint.temporary_dir import is_abandoned

if TYPE_CHECKING:
    from strom.runtime.rpc.heartbeat import Clock

__all__ = [
    "CsvEncoder",
    "DefaultRollingPolicy",
    "Encoder",
    "FileCommittable",
    "FileCommitter",
    "FileSink",
    "FileWriter",
    "FileWriterState",
    "JsonLinesEncoder",
    "OutputFileConfig",
    "RowFormatBuilder",
    "SimpleStringEncoder",
    "remove_abandoned_parts",
    "remove_abandoned_parts_of",
]

T = TypeVar("T")

_IN_PROGRESS = ".inprogress"
#: beside the parts of a writer whose job checkpoints into the client's temporary directory:
#: ``.strom-owner-<writer id>``, naming that directory (the parts go once it is abandoned)
_OWNER_MARKER = ".strom-owner-"
#: inside that temporary checkpoint directory: one file per FileSink directory its jobs wrote into
_SINK_DIRECTORIES = "file-sinks"


# -- encoders --------------------------------------------------------------------------------------------------
class Encoder(ABC, Generic[T]):
    """Turns a record into the bytes of one row (Flink's ``Encoder``)."""

    @abstractmethod
    def encode(self, record: T) -> bytes: ...

    def encode_batch(self, records: list[T]) -> bytes:
        """The rows of a whole batch as one bytes object; override for speed."""
        encode = self.encode
        return b"".join([encode(r) for r in records])


class SimpleStringEncoder(Encoder[Any]):
    """``str(record)`` and a newline (Flink's default row encoder)."""

    def __init__(self, charset: str = "utf-8") -> None:
        self.charset = _checked_charset(charset)

    def encode(self, record: Any) -> bytes:
        return f"{record!s}\n".encode(self.charset)

    def encode_batch(self, records: list[Any]) -> bytes:
        if not records:
            return b""
        return ("\n".join(map(str, records)) + "\n").encode(self.charset)


def _checked_charset(charset: str) -> str:
    try:
        codecs.lookup(charset)
    except (LookupError, TypeError) as exc:
        raise InvalidProgramError(
            f"an encoder's charset must name a Python codec; got {charset!r}; hint: 'utf-8'"
        ) from exc
    return charset


_JSON = json.JSONEncoder(separators=(",", ":"))


class JsonLinesEncoder(Encoder[Any]):
    """One compact JSON document per line (``json.dumps(record, separators=(",", ":"))``)."""

    def encode(self, record: Any) -> bytes:
        return self.encode_batch([record])

    def encode_batch(self, records: list[Any]) -> bytes:
        if not records:
            return b""
        try:
            text = "\n".join(map(_JSON.encode, records))
        except (TypeError, ValueError) as exc:
            raise _json_error(records, exc) from exc
        return (text + "\n").encode("utf-8")


def _json_error(records: list[Any], exc: Exception) -> SerializationError:
    bad: Any = None
    for r in records:
        try:
            _JSON.encode(r)
        except (TypeError, ValueError):
            bad = r
            break
    return SerializationError(
        "JsonLinesEncoder expected a JSON-serializable record (dict, list, str, int, float, bool or None); "
        f"got a {type(bad).__name__!r} ({exc}); hint: map records to dicts or lists first, "
        "e.g. .map(dataclasses.asdict) or .map(lambda r: {'id': r.id, ...})"
    )


class CsvEncoder(Encoder[Any]):
    """One CSV row per record (``csv.writer``): a tuple or list is a row of columns, any other value a
    single column; ``None`` is an empty field."""

    def __init__(self, delimiter: str = ",", line_terminator: str = "\n", charset: str = "utf-8") -> None:
        try:
            csv.writer(io.StringIO(), delimiter=delimiter, lineterminator=line_terminator)
        except (TypeError, csv.Error) as exc:
            raise InvalidProgramError(
                f"CsvEncoder expects a one-character delimiter; got {delimiter!r} ({exc}); hint: delimiter=';'"
            ) from exc
        self.charset = _checked_charset(charset)
        self.delimiter = delimiter
        self.line_terminator = line_terminator

    def encode(self, record: Any) -> bytes:
        return self.encode_batch([record])

    def encode_batch(self, records: list[Any]) -> bytes:
        buf = io.StringIO()
        writer = csv.writer(buf, delimiter=self.delimiter, lineterminator=self.line_terminator)
        rows: list[Any] = []
        for r in records:
            if isinstance(r, tuple | list):
                rows.append(r)
            elif isinstance(r, dict | set | frozenset):
                raise SerializationError(
                    f"CsvEncoder expected a tuple, a list or a single value per record; got a "
                    f"{type(r).__name__!r}; hint: map it to a tuple of the columns first, "
                    "e.g. .map(lambda d: (d['id'], d['name']))"
                )
            else:
                rows.append((r,))
        writer.writerows(rows)
        return buf.getvalue().encode(self.charset)


# -- configuration ------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class OutputFileConfig:
    """Part file names: ``<part_prefix>-<writer id>-<n><part_suffix>`` (Flink's ``OutputFileConfig``)."""

    part_prefix: str = "part"
    part_suffix: str = ""

    def __post_init__(self) -> None:
        for what, value in (("part_prefix", self.part_prefix), ("part_suffix", self.part_suffix)):
            if not isinstance(value, str) or "/" in value or os.sep in value:
                raise InvalidProgramError(
                    f"OutputFileConfig.{what} must be a str without path separators; got {value!r}; "
                    "hint: put directories into the FileSink's base path"
                )
        if not self.part_prefix:
            raise InvalidProgramError("OutputFileConfig.part_prefix must not be empty; got ''; hint: 'part'")


@dataclass(frozen=True, slots=True, kw_only=True)
class DefaultRollingPolicy:
    """Roll a part file when it would grow past ``max_part_size_bytes`` or is older than
    ``rollover_interval_ms`` (checked as records arrive). Parts always roll at checkpoints as well."""

    max_part_size_bytes: int = 128 * 1024 * 1024
    rollover_interval_ms: int = 60_000

    def __post_init__(self) -> None:
        for what, value in (
            ("max_part_size_bytes", self.max_part_size_bytes),
            ("rollover_interval_ms", self.rollover_interval_ms),
        ):
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise InvalidProgramError(
                    f"DefaultRollingPolicy.{what} must be a positive int; got {value!r}; "
                    "hint: DefaultRollingPolicy(max_part_size_bytes=128 * 1024 * 1024, rollover_interval_ms=60_000)"
                )

    def should_roll(self, part_size: int, added_bytes: int, part_age_ms: float) -> bool:
        """Whether an open part of ``part_size`` bytes and ``part_age_ms`` must roll before ``added_bytes``."""
        return part_size + added_bytes > self.max_part_size_bytes or part_age_ms >= self.rollover_interval_ms


# -- committables, state, committer ------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class FileCommittable:
    """A closed part file still under its hidden in-progress name, and the name committing gives it."""

    pending_path: str
    final_path: str


@dataclass(frozen=True, slots=True, kw_only=True)
class FileWriterState:
    """What a checkpoint keeps of a writer: its id, so a restore can delete the writer's dead parts."""

    writer_id: str


class FileCommitter(Committer[FileCommittable]):
    """Renames pending part files to their final names; a part already renamed counts as committed."""

    def commit(self, requests: list[CommitRequest[FileCommittable]]) -> None:
        directories: set[str] = set()
        for request in requests:
            c = request.committable
            try:
                os.replace(c.pending_path, c.final_path)
            except FileNotFoundError:
                if os.path.exists(c.final_path):
                    request.signal_already_committed()
                    continue
                raise StromError(
                    f"committing part file {c.final_path!r} expected it or its pending file "
                    f"{c.pending_path!r} to exist; got neither: the records of this part are lost; hint: "
                    "files under the FileSink's base path were deleted or moved by someone else, or the base "
                    "path is not the same shared directory on every TaskManager"
                ) from None
            directories.add(os.path.dirname(c.final_path))
        for d in directories:
            _fsync_directory(d)


def _fsync_directory(path: str) -> None:
    """Make renames in ``path`` durable (POSIX; a no-op where directories cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


# -- the writer -------------------------------------------------------------------------------------------
class FileWriter(StatefulSinkWriter[Any, FileWriterState], PrecommittingSinkWriter[Any, FileCommittable]):
    """Writes one subtask's records into part files (Flink's ``FileWriter`` with a single bucket)."""

    def __init__(
        self,
        *,
        directory: str,
        encoder: Encoder[Any],
        output_file_config: OutputFileConfig,
        rolling_policy: DefaultRollingPolicy,
        clock: Clock | None = None,
        recovered_state: list[Any] | None = None,
        temporary_checkpoint_dir: str = "",
    ) -> None:
        self.directory = directory
        self.encoder = encoder
        self.config = output_file_config
        self.policy = rolling_policy
        self._now = clock.monotonic if clock is not None else time.monotonic
        self.writer_id = uuid.uuid4().hex
        #: the job checkpoints into this temporary directory of its client: mark the parts with it
        self.temporary_checkpoint_dir = temporary_checkpoint_dir
        self._marked = False  # the owner marker of ``writer_id`` exists
        os.makedirs(directory, exist_ok=True)
        remove_abandoned_parts(directory)
        if recovered_state:
            self._delete_dead_parts({s.writer_id for s in recovered_state if isinstance(s, FileWriterState)})
        self._next_part = 0
        self._file: BinaryIO | None = None
        self._part: FileCommittable | None = None
        self._part_size = 0
        self._part_opened_at = 0.0
        self._rolled: list[FileCommittable] = []  # closed parts not yet handed to a checkpoint

    def write(self, element: Any) -> None:
        self.write_batch([element])

    def write_batch(self, elements: list[Any]) -> None:
        data = self.encoder.encode_batch(elements)
        if not data:
            return
        if not self._must_roll(len(data)):
            self._append(data)
        elif len(elements) == 1:
            if self._file is not None:
                self._roll()
            self._append(data)
        else:  # the batch does not fit into the open part: roll at record boundaries
            for e in elements:
                self.write_batch([e])

    def _must_roll(self, added: int) -> bool:
        if self._file is None:
            return added > self.policy.max_part_size_bytes
        age_ms = (self._now() - self._part_opened_at) * 1000.0
        return self.policy.should_roll(self._part_size, added, age_ms)

    def _append(self, data: bytes) -> None:
        f = self._file
        if f is None:
            f = self._open_part()
        f.write(data)
        self._part_size += len(data)

    def _open_part(self) -> BinaryIO:
        if self.temporary_checkpoint_dir and not self._marked:
            self._mark()
        n = self._next_part
        self._next_part += 1
        name = f"{self.config.part_prefix}-{self.writer_id}-{n}{self.config.part_suffix}"
        part = FileCommittable(
            pending_path=os.path.join(self.directory, f".{name}{_IN_PROGRESS}"),
            final_path=os.path.join(self.directory, name),
        )
        f: BinaryIO = open(part.pending_path, "xb", buffering=1 << 16)  # noqa: SIM115 - closed in _roll/close
        self._file, self._part = f, part
        self._part_size = 0
        self._part_opened_at = self._now()
        return f

    def _roll(self) -> None:
        f, part = self._file, self._part
        assert f is not None and part is not None
        self._file, self._part = None, None
        try:
            f.flush()
            os.fsync(f.fileno())
        finally:
            f.close()
        self._rolled.append(part)

    def flush(self, end_of_input: bool) -> None:
        if self._file is not None:
            self._file.flush()

    def prepare_commit(self) -> list[FileCommittable]:
        if self._file is not None:
            self._roll()
        out, self._rolled = self._rolled, []
        return out

    def snapshot_state(self, checkpoint_id: int) -> list[FileWriterState]:
        return [FileWriterState(writer_id=self.writer_id)]

    def on_savepoint_snapshot(self, checkpoint_id: int) -> None:
        """The parts just handed to savepoint ``checkpoint_id`` must outlive the client: unmark them, and go on
        under a fresh writer id (whose parts get a marker of their own). Every part of the old id is in the
        savepoint: the operator rolled the open one before the snapshot."""
        if not self._marked or self._file is not None or self._rolled:
            return
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._marker_path())
        self.writer_id = uuid.uuid4().hex
        self._marked = False

    def close(self) -> None:
        """Drop what no checkpoint references: the open part and parts rolled since the last checkpoint; and
        the owner marker once no part of this writer is left uncommitted."""
        f, part = self._file, self._part
        self._file, self._part = None, None
        dead, self._rolled = self._rolled, []
        if f is not None and part is not None:
            f.close()
            dead.append(part)
        for p in dead:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(p.pending_path)
        if self._marked and not any(_parts_of(self.directory, self._parts_lead())):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._marker_path())

    # -- owner markers: parts that only the client's temporary checkpoints could restore -------------
    def _parts_lead(self) -> str:
        return f".{self.config.part_prefix}-{self.writer_id}-"

    def _marker_path(self) -> str:
        return os.path.join(self.directory, f"{_OWNER_MARKER}{self.writer_id}")

    def _mark(self) -> None:
        """Before the first part: name the temporary checkpoint directory beside the parts, and this directory
        inside that one, so the parts go once that directory is abandoned (:func:`remove_abandoned_parts`)."""
        owner = {
            "checkpoints": self.temporary_checkpoint_dir,
            "host": socket.gethostname(),
            "parts": self._parts_lead(),
        }
        with open(self._marker_path(), "x", encoding="utf-8") as f:
            f.write(json.dumps(owner))
        self._marked = True
        registry = os.path.join(self.temporary_checkpoint_dir, _SINK_DIRECTORIES)
        entry = os.path.join(registry, hashlib.sha256(self.directory.encode()).hexdigest()[:32])
        if not os.path.exists(entry):  # best effort: the next writer here sweeps without it
            with contextlib.suppress(FileExistsError):
                os.mkdir(registry)
            with contextlib.suppress(FileExistsError), open(entry, "x", encoding="utf-8") as f:
                f.write(self.directory)

    def _delete_dead_parts(self, writer_ids: set[str]) -> None:
        """Delete the in-progress parts of the restored checkpoint's writers. Its committables were committed
        (renamed) before this writer was created, so whatever in-progress part of those writers is left holds
        records written after the checkpoint, which the sources replay."""
        if not writer_ids:
            return
        lead = f".{self.config.part_prefix}-"
        for name in os.listdir(self.directory):
            if not (name.startswith(lead) and name.endswith(_IN_PROGRESS)):
                continue
            writer_id = name[len(lead) :].split("-", 1)[0]
            if writer_id in writer_ids:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(os.path.join(self.directory, name))
        for writer_id in writer_ids:  # nothing of theirs is left to sweep
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(self.directory, f"{_OWNER_MARKER}{writer_id}"))


def _parts_of(directory: str, lead: str) -> list[str]:
    """The uncommitted (in-progress or pending) parts in ``directory`` whose names start with ``lead``."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    return [os.path.join(directory, n) for n in names if n.startswith(lead) and n.endswith(_IN_PROGRESS)]


def remove_abandoned_parts(directory: str) -> list[str]:
    """Remove the uncommitted parts in ``directory`` that only an abandoned temporary checkpoint directory
    could have restored — written by jobs of a client that is gone — with their owner markers; returns the
    parts. Parts without a marker (of jobs with configured checkpoint storage, or handed to a savepoint),
    markers of another host or of a live client, committed parts and other files are never touched."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    host = socket.gethostname()
    removed: list[str] = []
    for name in names:
        if not name.startswith(_OWNER_MARKER):
            continue
        marker = os.path.join(directory, name)
        writer_id = name[len(_OWNER_MARKER) :]
        try:
            with open(marker, encoding="utf-8") as f:
                owner = json.load(f)
            checkpoints, lead = str(owner["checkpoints"]), str(owner["parts"])
            same_host = owner["host"] == host
        except (OSError, ValueError, TypeError, KeyError):
            continue  # gone meanwhile, or not written whole: not ours to judge
        if not same_host or not lead.endswith(f"-{writer_id}-") or os.sep in lead or not is_abandoned(checkpoints):
            continue
        for part in _parts_of(directory, lead):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(part)
                removed.append(part)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(marker)
    return removed


def remove_abandoned_parts_of(temporary_checkpoint_dir: str) -> list[str]:
    """:func:`remove_abandoned_parts` in every FileSink directory the jobs of ``temporary_checkpoint_dir``
    wrote into (a closing cluster calls it for its own directory, a starting one for a killed client's, before
    removing the directory)."""
    registry = os.path.join(temporary_checkpoint_dir, _SINK_DIRECTORIES)
    try:
        entries = os.listdir(registry)
    except OSError:
        return []
    removed: list[str] = []
    for entry in entries:
        with contextlib.suppress(OSError, ValueError):
            with open(os.path.join(registry, entry), encoding="utf-8") as f:
                directory = f.read()
            removed.extend(remove_abandoned_parts(directory))
    return removed


# -- the sink and its builder --------------------------------------------------------------------------------
class FileSink(TwoPhaseCommittingSink[Any, FileCommittable]):
    """Exactly-once part files under ``base_path``; build one with :meth:`for_row_format`. With the checkpoints
    in the client's temporary directory, the uncommitted parts go with the client: when its cluster closes or,
    if it was killed, with the next run (see the module documentation)."""

    def __init__(
        self,
        *,
        base_path: str,
        encoder: Encoder[Any],
        output_file_config: OutputFileConfig,
        rolling_policy: DefaultRollingPolicy,
        clock: Clock | None = None,
    ) -> None:
        self.base_path = base_path
        self.encoder = encoder
        self.output_file_config = output_file_config
        self.rolling_policy = rolling_policy
        self.clock = clock

    @staticmethod
    def for_row_format(base_path: str | os.PathLike[str], encoder: Encoder[Any]) -> RowFormatBuilder:
        """A builder of a sink writing one encoded row per record into files under ``base_path``
        (a local path or a ``file://`` URI)."""
        if not isinstance(encoder, Encoder):
            raise InvalidProgramError(
                f"FileSink.for_row_format expects an Encoder; got a {type(encoder).__name__!r}; "
                "hint: JsonLinesEncoder(), CsvEncoder() or SimpleStringEncoder()"
            )
        return RowFormatBuilder(base_path=_local_path(base_path), encoder=encoder)

    def create_writer(self, context: SinkWriterContext) -> FileWriter:
        return self._writer(context, None)

    def restore_writer(self, context: SinkWriterContext, recovered_state: list[Any]) -> FileWriter:
        return self._writer(context, recovered_state)

    def _writer(self, context: SinkWriterContext, recovered_state: list[Any] | None) -> FileWriter:
        return FileWriter(
            directory=self.base_path,
            encoder=self.encoder,
            output_file_config=self.output_file_config,
            rolling_policy=self.rolling_policy,
            clock=self.clock,
            recovered_state=recovered_state,
            temporary_checkpoint_dir=context.temporary_checkpoint_dir,
        )

    def create_committer(self) -> FileCommitter:
        return FileCommitter()


@dataclass(frozen=True, slots=True, kw_only=True)
class RowFormatBuilder:
    """Flink's ``FileSink.RowFormatBuilder``: each ``with_*`` returns a new builder; ``build()`` the sink."""

    base_path: str
    encoder: Encoder[Any]
    output_file_config: OutputFileConfig = field(default_factory=OutputFileConfig)
    rolling_policy: DefaultRollingPolicy = field(default_factory=DefaultRollingPolicy)
    clock: Clock | None = None

    def with_output_file_config(self, config: OutputFileConfig) -> RowFormatBuilder:
        if not isinstance(config, OutputFileConfig):
            raise InvalidProgramError(
                f"with_output_file_config expects an OutputFileConfig; got a {type(config).__name__!r}; "
                "hint: OutputFileConfig(part_prefix='part', part_suffix='.jsonl')"
            )
        return replace(self, output_file_config=config)

    def with_rolling_policy(self, policy: DefaultRollingPolicy) -> RowFormatBuilder:
        if not isinstance(policy, DefaultRollingPolicy):
            raise InvalidProgramError(
                f"with_rolling_policy expects a DefaultRollingPolicy; got a {type(policy).__name__!r}; "
                "hint: DefaultRollingPolicy(max_part_size_bytes=..., rollover_interval_ms=...)"
            )
        return replace(self, rolling_policy=policy)

    def with_clock(self, clock: Clock) -> RowFormatBuilder:
        """The time source of the rollover interval (tests inject a manual clock)."""
        return replace(self, clock=clock)

    def build(self) -> FileSink:
        return FileSink(
            base_path=self.base_path,
            encoder=self.encoder,
            output_file_config=self.output_file_config,
            rolling_policy=self.rolling_policy,
            clock=self.clock,
        )


def _local_path(base_path: str | os.PathLike[str]) -> str:
    """An absolute local path from a plain path or a ``file://`` URI (resolved on the client)."""
    if not isinstance(base_path, str | os.PathLike) or not os.fspath(base_path):
        raise InvalidProgramError(
            f"FileSink expects a base path as a non-empty str; got {base_path!r}; hint: '/data/out'"
        )
    path = os.fspath(base_path)
    if "://" in path:
        uri = urllib.parse.urlparse(path)
        if uri.scheme != "file" or uri.netloc not in ("", "localhost"):
            raise InvalidProgramError(
                f"FileSink supports local paths and file:// URIs; got {path!r}; hint: mount the filesystem "
                "locally (the same path on every TaskManager) and pass that path"
            )
        path = urllib.parse.unquote(uri.path)
    return os.path.abspath(path)
