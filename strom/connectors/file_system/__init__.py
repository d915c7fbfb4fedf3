"""Flink's file connector (PyFlink's ``pyflink.datastream.connectors.file_system``): ``FileSource`` with its
stream and bulk formats, and ``FileSink``. Paths are fsspec URLs."""

from strom.connectors.file_system.bulk_format import BulkFormat
from strom.connectors.file_system.enumerator import (
    ContinuousFileSplitEnumerator,
    PendingSplitsCheckpoint,
    StaticFileSplitEnumerator,
)
from strom.connectors.file_system.sink import (
    CsvEncoder,
    DefaultRollingPolicy,
    Encoder,
    FileCommittable,
    FileCommitter,
    FileSink,
    FileWriter,
    FileWriterState,
    JsonLinesEncoder,
    OutputFileConfig,
    RowFormatBuilder,
    SimpleStringEncoder,
    remove_abandoned_parts,
    remove_abandoned_parts_of,
)
from strom.connectors.file_system.source import FileSource, FileSourceBuilder
from strom.connectors.file_system.split import CheckpointedPosition, FileSourceSplit
from strom.connectors.file_system.stream_format import InvalidRecord, StreamFormat, TextLineInputFormat

__all__ = [
    "BulkFormat",
    "CheckpointedPosition",
    "ContinuousFileSplitEnumerator",
    "CsvEncoder",
    "DefaultRollingPolicy",
    "Encoder",
    "FileCommittable",
    "FileCommitter",
    "FileSink",
    "FileSource",
    "FileSourceBuilder",
    "FileSourceSplit",
    "FileWriter",
    "FileWriterState",
    "InvalidRecord",
    "JsonLinesEncoder",
    "OutputFileConfig",
    "PendingSplitsCheckpoint",
    "RowFormatBuilder",
    "SimpleStringEncoder",
    "StaticFileSplitEnumerator",
    "StreamFormat",
    "TextLineInputFormat",
    "remove_abandoned_parts",
    "remove_abandoned_parts_of",
]
