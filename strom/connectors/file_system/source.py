"""``FileSource``: files as a source (Flink's ``FileSource``, PyFlink's names), on any fsspec URL.

    >>> source = (FileSource.for_record_stream_format(StreamFormat.text_line_format(), "logs/", "s3://b/more/")
    ...     .monitor_continuously(timedelta(seconds=10))
    ...     .build())
    >>> env.from_source(source, WatermarkStrategy.no_watermarks(), "logs")

A record stream format (text lines, :class:`~strom.formats.CsvReaderFormat`,
:class:`~strom.formats.JsonLinesReaderFormat`) reads each file as one split; a bulk format
(:class:`~strom.formats.ParquetColumnarRowInputFormat`) cuts files into its own splits (row groups). Bounded
by default (``process_static_file_set``); ``monitor_continuously(interval)`` makes it unbounded, reading files
that appear in the directories later, each once. ``validate()`` — called by ``execute()`` in the client —
fails at once for a path that does not exist, a scheme without its package, and ``memory://`` (each process
has its own).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import timedelta
from typing import Any, Generic, TypeVar

from strom.api.source import Boundedness, Source, SourceReader, SourceReaderContext, SplitEnumeratorContext
from strom.config_units import millis, parse_duration
from strom.connectors.file_system import fs as fsspec_urls
from strom.connectors.file_system.bulk_format import BulkFormat, SplitReader
from strom.connectors.file_system.enumerator import (
    ContinuousFileSplitEnumerator,
    PendingSplitsCheckpoint,
    StaticFileSplitEnumerator,
)
from strom.connectors.file_system.file_enumerator import FileEnumerator, whole_file_split
from strom.connectors.file_system.reader import FileSourceReader, StreamFormatSplitReader
from strom.connectors.file_system.split import FileSourceSplit
from strom.connectors.file_system.stream_format import StreamFormat
from strom.exceptions import ConnectorError, InvalidProgramError

__all__ = ["FileSource", "FileSourceBuilder"]

T = TypeVar("T")


def _interval_ms(interval: Any) -> int:
    try:
        if isinstance(interval, timedelta):
            ms = millis(interval)
        elif isinstance(interval, int) and not isinstance(interval, bool):
            ms = interval
        elif isinstance(interval, str):
            ms = millis(parse_duration(interval))
        else:
            raise ValueError(f"a {type(interval).__name__}")
    except ValueError as exc:
        raise InvalidProgramError(
            f"monitor_continuously expects an interval (a timedelta, milliseconds or a string such as '10 s'); "
            f"got {interval!r} ({exc})"
        ) from None
    if ms <= 0:
        raise InvalidProgramError(f"monitor_continuously expects a positive interval; got {interval!r}")
    return ms


class FileSource(Source[T], Generic[T]):
    """Reads files of one format from files and directories (see the module docs)."""

    def __init__(
        self,
        stream_format: StreamFormat | None,
        bulk_format: BulkFormat | None,
        paths: tuple[str, ...],
        discovery_interval_ms: int | None,
        storage_options: Mapping[str, Any],
    ) -> None:
        self.stream_format = stream_format
        self.bulk_format = bulk_format
        self.paths = paths
        self.discovery_interval_ms = discovery_interval_ms
        self.storage_options = dict(storage_options)

    @staticmethod
    def for_record_stream_format(stream_format: StreamFormat, *paths: str | os.PathLike[str]) -> FileSourceBuilder[Any]:
        """A source of the records of ``stream_format`` (text lines, CSV, JSON lines) in ``paths``."""
        if not isinstance(stream_format, StreamFormat):
            raise InvalidProgramError(
                f"for_record_stream_format expects a StreamFormat; got a {type(stream_format).__name__}; hint: "
                "StreamFormat.text_line_format(), CsvReaderFormat.for_schema(schema), or for_bulk_file_format "
                "for Parquet"
            )
        return FileSourceBuilder(stream_format, None, paths)

    @staticmethod
    def for_bulk_file_format(bulk_format: BulkFormat, *paths: str | os.PathLike[str]) -> FileSourceBuilder[Any]:
        """A source of the records of ``bulk_format`` (Parquet) in ``paths``."""
        if not isinstance(bulk_format, BulkFormat):
            raise InvalidProgramError(
                f"for_bulk_file_format expects a BulkFormat; got a {type(bulk_format).__name__}; hint: "
                "ParquetColumnarRowInputFormat(), or for_record_stream_format for line formats"
            )
        return FileSourceBuilder(None, bulk_format, paths)

    @property
    def boundedness(self) -> str:
        return Boundedness.BOUNDED if self.discovery_interval_ms is None else Boundedness.CONTINUOUS_UNBOUNDED

    # -- enumerator (JobManager) -------------------------------------------------------------------
    def file_enumerator(self) -> FileEnumerator:
        create = self.bulk_format.create_splits if self.bulk_format is not None else whole_file_split
        return FileEnumerator(self.paths, self.storage_options, create)

    def create_enumerator(self, context: SplitEnumeratorContext) -> StaticFileSplitEnumerator:
        return self.restore_enumerator(context, None)

    def restore_enumerator(self, context: SplitEnumeratorContext, checkpoint: Any) -> StaticFileSplitEnumerator:
        if checkpoint is not None and not isinstance(checkpoint, PendingSplitsCheckpoint):
            raise ConnectorError(
                f"expected the file source's enumerator state (a PendingSplitsCheckpoint); got a "
                f"{type(checkpoint).__name__}; hint: the savepoint was taken with another source under this uid"
            )
        if self.discovery_interval_ms is None:
            return StaticFileSplitEnumerator(context, self.file_enumerator(), checkpoint)
        return ContinuousFileSplitEnumerator(  # type: ignore[return-value]
            context, self.file_enumerator(), self.discovery_interval_ms, checkpoint
        )

    # -- reader (TaskManager) ----------------------------------------------------------------------
    def create_reader(self, context: SourceReaderContext) -> SourceReader[T]:
        def open_split(split: FileSourceSplit) -> SplitReader:
            fs, fs_path = fsspec_urls.resolve(split.path, self.storage_options, role="source file")
            if self.bulk_format is not None:
                return self.bulk_format.create_reader(fs, fs_path, split)
            assert self.stream_format is not None
            return StreamFormatSplitReader(split, self.stream_format, fs, fs_path, context)

        return FileSourceReader(context, open_split)

    # -- client ------------------------------------------------------------------------------------
    def validate(self) -> None:
        for path in self.paths:
            if fsspec_urls.protocol_of(path) == "memory":
                raise ConnectorError(
                    f"expected a source path every TaskManager can read; got {path!r}, and memory:// is private "
                    "to each process (the TaskManagers cannot see the client's memory filesystem); hint: use a "
                    "local directory, or s3:// (an S3-compatible server) for files shared between machines"
                )
            fs, fs_path = fsspec_urls.resolve(path, self.storage_options, role="source path")
            try:
                exists = fs.exists(fs_path)
            except Exception as exc:
                raise ConnectorError(
                    f"expected to reach the source path {path!r}; got {exc!r}; hint: check the URL, the "
                    "credentials and storage_options (e.g. an S3 endpoint_url)"
                ) from None
            if not exists:
                raise ConnectorError(
                    f"expected the source path {path!r} to exist; got nothing there; hint: check the path "
                    "(directories are read recursively; a glob is not expanded)"
                )


class FileSourceBuilder(Generic[T]):
    """Builds a :class:`FileSource` (Flink's ``FileSourceBuilder``)."""

    def __init__(
        self, stream_format: StreamFormat | None, bulk_format: BulkFormat | None, paths: tuple[Any, ...]
    ) -> None:
        if not paths:
            raise InvalidProgramError(
                "expected at least one path (a file, a directory or an fsspec URL) to read; got none; hint: "
                "FileSource.for_record_stream_format(fmt, 'data/')"
            )
        for path in paths:
            if not isinstance(path, str | os.PathLike) or not os.fspath(path):
                raise InvalidProgramError(f"expected a source path (a str or os.PathLike); got {path!r}")
        self._stream_format = stream_format
        self._bulk_format = bulk_format
        self._paths = tuple(os.fspath(p) for p in paths)
        self._discovery_interval_ms: int | None = None
        self._storage_options: dict[str, Any] = {}

    def monitor_continuously(self, discovery_interval: timedelta | int | str) -> FileSourceBuilder[T]:
        """Unbounded: list the paths every ``discovery_interval`` and read the files not seen before."""
        self._discovery_interval_ms = _interval_ms(discovery_interval)
        return self

    def process_static_file_set(self) -> FileSourceBuilder[T]:
        """Bounded (the default): read the files there when the job starts, then finish."""
        self._discovery_interval_ms = None
        return self

    def storage_options(self, options: Mapping[str, Any]) -> FileSourceBuilder[T]:
        """fsspec options for the paths' filesystem, e.g. ``{"endpoint_url": "http://127.0.0.1:9000"}``."""
        if not isinstance(options, Mapping):
            raise InvalidProgramError(f"storage_options expects a dict; got a {type(options).__name__}")
        self._storage_options = dict(options)
        return self

    def build(self) -> FileSource[T]:
        return FileSource(
            self._stream_format, self._bulk_format, self._paths, self._discovery_interval_ms, self._storage_options
        )
