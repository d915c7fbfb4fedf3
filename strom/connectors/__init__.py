"""Connectors: sources and sinks for external systems."""

from strom.connectors.collection import CollectionSource
from strom.connectors.datagen import DataGeneratorSource
from strom.connectors.file_system import (
    BucketAssigner,
    CsvEncoder,
    DefaultRollingPolicy,
    Encoder,
    FileSink,
    FileSource,
    JsonLinesEncoder,
    OnCheckpointRollingPolicy,
    OutputFileConfig,
    RollingPolicy,
    SimpleStringEncoder,
    StreamFormat,
)
from strom.connectors.number_sequence import NumberSequenceSource

__all__ = [
    "BucketAssigner",
    "CollectionSource",
    "CsvEncoder",
    "DataGeneratorSource",
    "DefaultRollingPolicy",
    "Encoder",
    "FileSink",
    "FileSource",
    "JsonLinesEncoder",
    "NumberSequenceSource",
    "OnCheckpointRollingPolicy",
    "OutputFileConfig",
    "RollingPolicy",
    "SimpleStringEncoder",
    "StreamFormat",
]
