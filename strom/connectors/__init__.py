"""Connectors: sources and sinks for external systems."""

from __future__ import annotations

from typing import TYPE_CHECKING

from strom.lazy_exports import LazyExports

if TYPE_CHECKING:
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

_LAZY = LazyExports(
    __name__,
    {
        "strom.connectors.collection": ("CollectionSource",),
        "strom.connectors.datagen": ("DataGeneratorSource",),
        "strom.connectors.file_system": (
            "BucketAssigner",
            "CsvEncoder",
            "DefaultRollingPolicy",
            "Encoder",
            "FileSink",
            "FileSource",
            "JsonLinesEncoder",
            "OnCheckpointRollingPolicy",
            "OutputFileConfig",
            "RollingPolicy",
            "SimpleStringEncoder",
            "StreamFormat",
        ),
        "strom.connectors.number_sequence": ("NumberSequenceSource",),
    },
)

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


def __getattr__(name: str) -> object:
    return _LAZY.load(name)


def __dir__() -> list[str]:
    return _LAZY.dir(globals())
