"""Connectors: sources and sinks for external systems."""

from strom.connectors.collection import CollectionSource
from strom.connectors.datagen import DataGeneratorSource
from strom.connectors.file_system import (
    CsvEncoder,
    DefaultRollingPolicy,
    Encoder,
    FileSink,
    JsonLinesEncoder,
    OutputFileConfig,
    SimpleStringEncoder,
)
from strom.connectors.number_sequence import NumberSequenceSource

__all__ = [
    "CollectionSource",
    "CsvEncoder",
    "DataGeneratorSource",
    "DefaultRollingPolicy",
    "Encoder",
    "FileSink",
    "JsonLinesEncoder",
    "NumberSequenceSource",
    "OutputFileConfig",
    "SimpleStringEncoder",
]
