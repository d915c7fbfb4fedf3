"""Flink's file connector (PyFlink's ``pyflink.datastream.connectors.file_system``): ``FileSink`` here; the
``FileSource`` and its formats follow. Paths are fsspec URLs."""

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
