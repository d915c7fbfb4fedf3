"""Flink's file connector (PyFlink's ``pyflink.datastream.connectors.file_system``): ``FileSink`` here; the
``FileSource`` and its formats follow. Paths are local paths or fsspec URLs."""

from strom.connectors.file_system.bucket_assigners import (
    BasePathBucketAssigner,
    BucketAssigner,
    BucketAssignerContext,
    DateTimeBucketAssigner,
    FieldBucketAssigner,
)
from strom.connectors.file_system.bulk_writer import BulkWriter, BulkWriterFactory
from strom.connectors.file_system.encoders import CsvEncoder, Encoder, JsonLinesEncoder, SimpleStringEncoder
from strom.connectors.file_system.file_committer import FileCommittable, FileCommitter
from strom.connectors.file_system.file_writer import FileWriter, FileWriterState
from strom.connectors.file_system.output_file_config import OutputFileConfig, OutputFileConfigBuilder
from strom.connectors.file_system.owner_markers import remove_abandoned_parts, remove_abandoned_parts_of
from strom.connectors.file_system.rolling_policy import (
    DefaultRollingPolicy,
    OnCheckpointRollingPolicy,
    PartFileInfo,
    RollingPolicy,
)
from strom.connectors.file_system.sink import BulkFormatBuilder, FileSink, RowFormatBuilder

__all__ = [
    "BasePathBucketAssigner",
    "BucketAssigner",
    "BucketAssignerContext",
    "BulkFormatBuilder",
    "BulkWriter",
    "BulkWriterFactory",
    "CsvEncoder",
    "DateTimeBucketAssigner",
    "DefaultRollingPolicy",
    "Encoder",
    "FieldBucketAssigner",
    "FileCommittable",
    "FileCommitter",
    "FileSink",
    "FileWriter",
    "FileWriterState",
    "JsonLinesEncoder",
    "OnCheckpointRollingPolicy",
    "OutputFileConfig",
    "OutputFileConfigBuilder",
    "PartFileInfo",
    "RollingPolicy",
    "RowFormatBuilder",
    "SimpleStringEncoder",
    "remove_abandoned_parts",
    "remove_abandoned_parts_of",
]
