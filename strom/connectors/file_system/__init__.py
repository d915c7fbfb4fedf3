"""Flink's file connector (PyFlink's ``pyflink.datastream.connectors.file_system``): ``FileSource`` with its
stream and bulk formats, and ``FileSink`` with its encoders, bulk writers, bucket assigners, rolling policies,
output file config and compaction. Paths are local paths or fsspec URLs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from strom.lazy_exports import LazyExports

if TYPE_CHECKING:
    from strom.connectors.file_system.bucket_assigners import (
        BasePathBucketAssigner,
        BucketAssigner,
        BucketAssignerContext,
        DateTimeBucketAssigner,
        FieldBucketAssigner,
    )
    from strom.connectors.file_system.bulk_format import BulkFormat
    from strom.connectors.file_system.bulk_writer import BulkWriter, BulkWriterFactory
    from strom.connectors.file_system.compaction import (
        ConcatFileCompactor,
        FileCompactor,
        FileCompactStrategy,
        ParquetFileCompactor,
    )
    from strom.connectors.file_system.encoders import CsvEncoder, Encoder, JsonLinesEncoder, SimpleStringEncoder
    from strom.connectors.file_system.enumerator import (
        ContinuousFileSplitEnumerator,
        PendingSplitsCheckpoint,
        StaticFileSplitEnumerator,
    )
    from strom.connectors.file_system.file_committer import FileCommittable, FileCommitter
    from strom.connectors.file_system.file_writer import FileWriter, FileWriterBucketState, FileWriterState
    from strom.connectors.file_system.output_file_config import OutputFileConfig, OutputFileConfigBuilder
    from strom.connectors.file_system.owner_markers import remove_abandoned_parts, remove_abandoned_parts_of
    from strom.connectors.file_system.rolling_policy import (
        DefaultRollingPolicy,
        OnCheckpointRollingPolicy,
        PartFileInfo,
        RollingPolicy,
    )
    from strom.connectors.file_system.sink import BulkFormatBuilder, FileSink, RowFormatBuilder
    from strom.connectors.file_system.source import FileSource, FileSourceBuilder
    from strom.connectors.file_system.split import CheckpointedPosition, FileSourceSplit
    from strom.connectors.file_system.stream_format import InvalidRecord, StreamFormat, TextLineInputFormat

_LAZY = LazyExports(
    __name__,
    {
        "strom.connectors.file_system.bucket_assigners": (
            "BasePathBucketAssigner",
            "BucketAssigner",
            "BucketAssignerContext",
            "DateTimeBucketAssigner",
            "FieldBucketAssigner",
        ),
        "strom.connectors.file_system.bulk_format": ("BulkFormat",),
        "strom.connectors.file_system.bulk_writer": ("BulkWriter", "BulkWriterFactory"),
        "strom.connectors.file_system.compaction": (
            "ConcatFileCompactor",
            "FileCompactor",
            "FileCompactStrategy",
            "ParquetFileCompactor",
        ),
        "strom.connectors.file_system.encoders": ("CsvEncoder", "Encoder", "JsonLinesEncoder", "SimpleStringEncoder"),
        "strom.connectors.file_system.enumerator": (
            "ContinuousFileSplitEnumerator",
            "PendingSplitsCheckpoint",
            "StaticFileSplitEnumerator",
        ),
        "strom.connectors.file_system.file_committer": ("FileCommittable", "FileCommitter"),
        "strom.connectors.file_system.file_writer": ("FileWriter", "FileWriterBucketState", "FileWriterState"),
        "strom.connectors.file_system.output_file_config": ("OutputFileConfig", "OutputFileConfigBuilder"),
        "strom.connectors.file_system.owner_markers": ("remove_abandoned_parts", "remove_abandoned_parts_of"),
        "strom.connectors.file_system.rolling_policy": (
            "DefaultRollingPolicy",
            "OnCheckpointRollingPolicy",
            "PartFileInfo",
            "RollingPolicy",
        ),
        "strom.connectors.file_system.sink": ("BulkFormatBuilder", "FileSink", "RowFormatBuilder"),
        "strom.connectors.file_system.source": ("FileSource", "FileSourceBuilder"),
        "strom.connectors.file_system.split": ("CheckpointedPosition", "FileSourceSplit"),
        "strom.connectors.file_system.stream_format": ("InvalidRecord", "StreamFormat", "TextLineInputFormat"),
    },
)

__all__ = [
    "BasePathBucketAssigner",
    "BucketAssigner",
    "BucketAssignerContext",
    "BulkFormat",
    "BulkFormatBuilder",
    "BulkWriter",
    "BulkWriterFactory",
    "CheckpointedPosition",
    "ConcatFileCompactor",
    "ContinuousFileSplitEnumerator",
    "CsvEncoder",
    "DateTimeBucketAssigner",
    "DefaultRollingPolicy",
    "Encoder",
    "FieldBucketAssigner",
    "FileCommittable",
    "FileCommitter",
    "FileCompactStrategy",
    "FileCompactor",
    "FileSink",
    "FileSource",
    "FileSourceBuilder",
    "FileSourceSplit",
    "FileWriter",
    "FileWriterBucketState",
    "FileWriterState",
    "InvalidRecord",
    "JsonLinesEncoder",
    "OnCheckpointRollingPolicy",
    "OutputFileConfig",
    "OutputFileConfigBuilder",
    "ParquetFileCompactor",
    "PartFileInfo",
    "PendingSplitsCheckpoint",
    "RollingPolicy",
    "RowFormatBuilder",
    "SimpleStringEncoder",
    "StaticFileSplitEnumerator",
    "StreamFormat",
    "TextLineInputFormat",
    "remove_abandoned_parts",
    "remove_abandoned_parts_of",
]


def __getattr__(name: str) -> object:
    return _LAZY.load(name)


def __dir__() -> list[str]:
    return _LAZY.dir(globals())
