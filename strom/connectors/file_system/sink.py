"""``FileSink``: exactly-once part files under a local path or any fsspec URL (Flink's ``FileSink``).

    sink = (
        FileSink.for_row_format("s3://bucket/events", Encoder.simple_string_encoder(),
                                storage_options={"endpoint_url": "http://127.0.0.1:9000"})
        .with_output_file_config(OutputFileConfig.builder().with_part_prefix("ev").with_part_suffix(".txt").build())
        .with_rolling_policy(RollingPolicy.default_rolling_policy(part_size="64 mb", rollover_interval="5 min"))
        .with_bucket_assigner(BucketAssigner.date_time_bucket_assigner("yyyy-MM-dd--HH", "UTC"))
        .build()
    )
    parquet = FileSink.for_bulk_format("/data/out", ParquetBulkWriters.for_schema(schema)).build()
    stream.sink_to(sink)

Each writer (one per subtask and attempt, with a random id) writes one hidden in-progress part per active
bucket, ``<base>/<bucket id>/.<prefix>-<writer id>-<n><suffix>.inprogress`` (:mod:`.file_writer`). When the
:class:`RollingPolicy` says so — part size, rollover interval, inactivity, checked as records arrive and by a
processing-time timer without them; at checkpoints for ``OnCheckpointRollingPolicy`` — a part rolls
(finished, made durable, closed) and at the next checkpoint becomes a :class:`FileCommittable`, still under
its hidden name. As Flink's, a row-format part on a local filesystem under ``DefaultRollingPolicy`` stays in
progress across checkpoints (each checkpoint records its durable size; a restore truncates and resumes it);
bulk formats and object stores roll every part at every checkpoint, savepoints and end of input roll all. Once the
checkpoint is complete the committer gives it its final name ``<prefix>-<writer id>-<n><suffix>``: an atomic
rename on local filesystems, a server-side copy and delete of the staging object on object stores
(:mod:`.recoverable_writer`). Commits are idempotent. Row formats use an :class:`Encoder`; bulk formats a
:class:`BulkWriterFactory` and roll only at checkpoints (and at a part size, if given).

Nothing uncommitted is ever visible under a final name. On restore, the uncommitted parts of the writers
recorded in the restored checkpoint that no committable of it references (records written after that
checkpoint, to be replayed) are deleted. Without checkpointing the parts are committed at end of input
(Flink's BATCH mode). The parts of jobs whose checkpoints nothing can restore once their client is gone carry
owner markers and are swept with the client (:mod:`.owner_markers`).

As Flink's, the default bucket assigner is ``DateTimeBucketAssigner`` (``<base>/yyyy-MM-dd--HH/`` in the
system's time zone); ``BucketAssigner.base_path_bucket_assigner()`` writes into the base path itself. Departure
from Flink: parts on object stores (``s3://`` …) roll at every checkpoint, whatever the policy (Flink's S3 writer
resumes multipart uploads).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from strom.api.sink import SinkWriterContext, TwoPhaseCommittingSink
from strom.connectors.file_system.bucket_assigners import BucketAssigner, DateTimeBucketAssigner
from strom.connectors.file_system.bulk_writer import BulkWriterFactory
from strom.connectors.file_system.compaction import FileCompactor, FileCompactStrategy
from strom.connectors.file_system.encoders import Encoder, SimpleStringEncoder
from strom.connectors.file_system.file_committer import FileCommittable, FileCommitter
from strom.connectors.file_system.file_writer import FileWriter
from strom.connectors.file_system.fs import is_local, resolve
from strom.connectors.file_system.output_file_config import OutputFileConfig
from strom.connectors.file_system.recoverable_writer import local_path, recoverable_writer_for
from strom.connectors.file_system.rolling_policy import (
    DefaultRollingPolicy,
    OnCheckpointRollingPolicy,
    RollingPolicy,
)
from strom.exceptions import ConnectorError, InvalidProgramError

if TYPE_CHECKING:
    from strom.runtime.rpc.heartbeat import Clock

__all__ = ["BulkFormatBuilder", "FileSink", "RowFormatBuilder"]


class FileSink(TwoPhaseCommittingSink[Any, FileCommittable]):
    """Exactly-once part files under ``base_path``; build one with :meth:`for_row_format` or
    :meth:`for_bulk_format`."""

    def __init__(
        self,
        *,
        base_path: str,
        output_file_config: OutputFileConfig,
        rolling_policy: RollingPolicy,
        encoder: Encoder[Any] | None = None,
        bulk_writer_factory: BulkWriterFactory | None = None,
        bucket_assigner: BucketAssigner | None = None,
        storage_options: Mapping[str, Any] | None = None,
        bucket_check_interval_ms: int = 60_000,
        clock: Clock | None = None,
        compaction: tuple[FileCompactStrategy, FileCompactor] | None = None,
    ) -> None:
        self.base_path = base_path
        self.compaction = compaction
        self.encoder = encoder
        self.bulk_writer_factory = bulk_writer_factory
        self.output_file_config = output_file_config
        self.rolling_policy = rolling_policy
        self.bucket_assigner = bucket_assigner or DateTimeBucketAssigner()
        self.storage_options = dict(storage_options or {})
        self.bucket_check_interval_ms = bucket_check_interval_ms
        self.clock = clock

    def set_input_type(self, type_info: Any) -> None:
        """A typed stream is written as Flink writes it: ``Encoder.simple_string_encoder()`` uses the type's
        Java ``toString`` (``(a,5)`` for a ``Types.TUPLE``)."""
        if isinstance(self.encoder, SimpleStringEncoder) and type_info is not None and not type_info.is_pickled():
            self.encoder = SimpleStringEncoder(self.encoder.charset, formatter=type_info.formatter())

    @staticmethod
    def for_row_format(
        base_path: str | os.PathLike[str], encoder: Encoder[Any], *, storage_options: Mapping[str, Any] | None = None
    ) -> RowFormatBuilder:
        """A builder of a sink writing one encoded row per record into part files under ``base_path`` (a local
        path, ``file://`` or any fsspec URL; ``storage_options`` for its filesystem, e.g. an S3 endpoint)."""
        if not isinstance(encoder, Encoder):
            raise InvalidProgramError(
                f"FileSink.for_row_format expects an Encoder; got a {type(encoder).__name__!r}; "
                "hint: JsonLinesEncoder(), CsvEncoder() or Encoder.simple_string_encoder()"
            )
        return RowFormatBuilder(
            base_path=_base_path(base_path), encoder=encoder, storage_options=_options(storage_options)
        )

    @staticmethod
    def for_bulk_format(
        base_path: str | os.PathLike[str],
        writer_factory: BulkWriterFactory,
        *,
        storage_options: Mapping[str, Any] | None = None,
    ) -> BulkFormatBuilder:
        """A builder of a sink writing whole part files with a bulk format (Parquet:
        ``ParquetBulkWriters.for_schema(schema)``); parts roll at every checkpoint."""
        if not isinstance(writer_factory, BulkWriterFactory):
            raise InvalidProgramError(
                f"FileSink.for_bulk_format expects a BulkWriterFactory; got a {type(writer_factory).__name__!r}; "
                "hint: ParquetBulkWriters.for_schema(pyarrow_schema) from strom.formats.parquet_writer"
            )
        return BulkFormatBuilder(
            base_path=_base_path(base_path),
            bulk_writer_factory=writer_factory,
            storage_options=_options(storage_options),
        )

    def validate(self) -> None:
        """In the client, before a cluster starts: the URL's scheme is known and its package installed."""
        if not is_local(self.base_path):
            resolve(self.base_path, self.storage_options, role="FileSink base path")
        if self.bulk_writer_factory is not None:
            self.bulk_writer_factory.validate()

    def create_writer(self, context: SinkWriterContext) -> FileWriter:
        return self._writer(context, None)

    def restore_writer(self, context: SinkWriterContext, recovered_state: list[Any]) -> FileWriter:
        return self._writer(context, recovered_state)

    def _writer(self, context: SinkWriterContext, recovered_state: list[Any] | None) -> FileWriter:
        storage, directory = recoverable_writer_for(self.base_path, self.storage_options)
        return FileWriter(
            directory=directory,
            storage=storage,
            encoder=self.encoder,
            bulk_writer_factory=self.bulk_writer_factory,
            output_file_config=self.output_file_config,
            rolling_policy=self.rolling_policy,
            bucket_assigner=self.bucket_assigner,
            clock=self.clock,
            recovered_state=recovered_state,
            temporary_checkpoint_dir=context.temporary_checkpoint_dir,
            processing_time_service=context.processing_time_service,
            bucket_check_interval_ms=self.bucket_check_interval_ms,
            compaction=self.compaction,
        )

    def create_committer(self) -> FileCommitter:
        return FileCommitter(self.storage_options)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Builder:
    base_path: str
    storage_options: dict[str, Any] = field(default_factory=dict)
    output_file_config: OutputFileConfig = field(default_factory=OutputFileConfig)
    bucket_assigner: BucketAssigner = field(default_factory=DateTimeBucketAssigner)
    bucket_check_interval_ms: int = 60_000
    clock: Clock | None = None
    compaction: tuple[FileCompactStrategy, FileCompactor] | None = None

    def with_output_file_config(self, config: OutputFileConfig) -> Any:
        if not isinstance(config, OutputFileConfig):
            raise InvalidProgramError(
                f"with_output_file_config expects an OutputFileConfig; got a {type(config).__name__!r}; "
                "hint: OutputFileConfig.builder().with_part_prefix('part').with_part_suffix('.jsonl').build()"
            )
        return replace(self, output_file_config=config)

    def with_bucket_assigner(self, assigner: BucketAssigner) -> Any:
        if not isinstance(assigner, BucketAssigner):
            raise InvalidProgramError(
                f"with_bucket_assigner expects a BucketAssigner; got a {type(assigner).__name__!r}; "
                "hint: BucketAssigner.date_time_bucket_assigner() or a subclass with get_bucket_id(element, context)"
            )
        return replace(self, bucket_assigner=assigner)

    def with_bucket_check_interval(self, interval_ms: int) -> Any:
        """How often the writer checks its open parts for rollover and inactivity (ms; Flink's default 60 s)."""
        if not isinstance(interval_ms, int) or isinstance(interval_ms, bool) or interval_ms <= 0:
            raise InvalidProgramError(
                f"with_bucket_check_interval expects positive milliseconds; got {interval_ms!r}; hint: 60_000"
            )
        return replace(self, bucket_check_interval_ms=interval_ms)

    def with_storage_options(self, storage_options: Mapping[str, Any]) -> Any:
        """Options of the base path's fsspec filesystem (s3fs: ``endpoint_url``, ``key``, ``secret`` …)."""
        return replace(self, storage_options=_options(storage_options))

    def enable_compact(self, strategy: FileCompactStrategy, compactor: FileCompactor) -> Any:
        """Merge the rolled parts of a bucket into one before they are committed (Flink's ``enableCompact``;
        :mod:`.compaction`): when they reach ``strategy`` 's size threshold or number of checkpoints."""
        if not isinstance(strategy, FileCompactStrategy) or not isinstance(compactor, FileCompactor):
            raise InvalidProgramError(
                f"enable_compact expects a FileCompactStrategy and a FileCompactor; got a {type(strategy).__name__!r} "
                f"and a {type(compactor).__name__!r}; hint: enable_compact(FileCompactStrategy.Builder.new_builder()"
                ".enable_compaction_on_checkpoint(5).build(), FileCompactor.parquet_file_compactor())"
            )
        return replace(self, compaction=(strategy, compactor))

    def disable_compact(self) -> Any:
        return replace(self, compaction=None)

    def with_clock(self, clock: Clock) -> Any:
        """The time source of part ages (tests inject a manual clock)."""
        return replace(self, clock=clock)


@dataclass(frozen=True, slots=True, kw_only=True)
class RowFormatBuilder(_Builder):
    """Flink's ``FileSink.RowFormatBuilder``: each ``with_*`` returns a new builder; ``build()`` the sink."""

    encoder: Encoder[Any]
    rolling_policy: RollingPolicy = field(default_factory=DefaultRollingPolicy)

    def with_rolling_policy(self, policy: RollingPolicy) -> RowFormatBuilder:
        if not isinstance(policy, RollingPolicy):
            raise InvalidProgramError(
                f"with_rolling_policy expects a RollingPolicy; got a {type(policy).__name__!r}; "
                "hint: RollingPolicy.default_rolling_policy(part_size='128 mb', rollover_interval='60 s')"
            )
        return replace(self, rolling_policy=policy)

    def build(self) -> FileSink:
        return FileSink(
            base_path=self.base_path,
            encoder=self.encoder,
            output_file_config=self.output_file_config,
            rolling_policy=self.rolling_policy,
            bucket_assigner=self.bucket_assigner,
            storage_options=self.storage_options,
            bucket_check_interval_ms=self.bucket_check_interval_ms,
            clock=self.clock,
            compaction=self.compaction,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class BulkFormatBuilder(_Builder):
    """Flink's ``FileSink.BulkFormatBuilder``: bulk parts roll at checkpoints (``OnCheckpointRollingPolicy``,
    optionally with a part size)."""

    bulk_writer_factory: BulkWriterFactory
    rolling_policy: OnCheckpointRollingPolicy = field(default_factory=OnCheckpointRollingPolicy)

    def with_rolling_policy(self, policy: OnCheckpointRollingPolicy) -> BulkFormatBuilder:
        if not isinstance(policy, OnCheckpointRollingPolicy):
            raise InvalidProgramError(
                f"a bulk format's with_rolling_policy expects an OnCheckpointRollingPolicy; got a "
                f"{type(policy).__name__!r}: a bulk part cannot be resumed, it rolls at checkpoints; "
                "hint: RollingPolicy.on_checkpoint_rolling_policy(part_size='256 mb')"
            )
        return replace(self, rolling_policy=policy)

    def build(self) -> FileSink:
        return FileSink(
            base_path=self.base_path,
            bulk_writer_factory=self.bulk_writer_factory,
            output_file_config=self.output_file_config,
            rolling_policy=self.rolling_policy,
            bucket_assigner=self.bucket_assigner,
            storage_options=self.storage_options,
            bucket_check_interval_ms=self.bucket_check_interval_ms,
            clock=self.clock,
            compaction=self.compaction,
        )


def _base_path(base_path: object) -> str:
    """An absolute local path (resolved on the client) or the URL as given."""
    if not isinstance(base_path, str | os.PathLike) or not os.fspath(base_path):
        raise InvalidProgramError(
            f"FileSink expects a base path as a non-empty str; got {base_path!r}; hint: '/data/out' or 's3://b/out'"
        )
    path = os.fspath(base_path)
    if is_local(path):
        try:
            return local_path(path)
        except ConnectorError as exc:
            raise InvalidProgramError(str(exc)) from None
    return path.rstrip("/")


def _options(storage_options: Mapping[str, Any] | None) -> dict[str, Any]:
    if storage_options is not None and not isinstance(storage_options, Mapping):
        raise InvalidProgramError(
            f"storage_options must be a mapping of fsspec options; got a {type(storage_options).__name__!r}; "
            "hint: {'endpoint_url': 'http://127.0.0.1:9000', 'key': ..., 'secret': ...}"
        )
    return dict(storage_options or {})


# PyFlink's nested names: FileSink.RowFormatBuilder, FileSink.BulkFormatBuilder
FileSink.RowFormatBuilder = RowFormatBuilder  # type: ignore[attr-defined]
FileSink.BulkFormatBuilder = BulkFormatBuilder  # type: ignore[attr-defined]
