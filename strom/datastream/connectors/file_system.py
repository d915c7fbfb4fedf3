"""PyFlink's ``pyflink.datastream.connectors.file_system`` module path (re-exports; see
:mod:`strom.connectors.file_system`)."""

from strom.connectors.file_system import (
    BucketAssigner,
    BulkFormat,
    FileCompactor,
    FileCompactStrategy,
    FileSink,
    FileSource,
    FileSourceBuilder,
    OutputFileConfig,
    RollingPolicy,
    StreamFormat,
)

__all__ = [
    "BucketAssigner",
    "BulkFormat",
    "FileCompactStrategy",
    "FileCompactor",
    "FileSink",
    "FileSource",
    "FileSourceBuilder",
    "OutputFileConfig",
    "RollingPolicy",
    "StreamFormat",
]
