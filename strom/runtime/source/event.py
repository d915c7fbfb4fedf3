"""The operator events between a source's coordinator and its ``SourceOperator`` s (Flink's
``org.apache.flink.runtime.source.event``). Frozen and pickled; they travel in order with checkpoint triggers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "AddSplitEvent",
    "NoMoreSplitsEvent",
    "ReaderRegistrationEvent",
    "ReportedWatermarkEvent",
    "RequestSplitEvent",
    "SourceEventWrapper",
    "WatermarkAlignmentEvent",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class ReaderRegistrationEvent:
    """Reader → enumerator, once at the operator's open: the reader of ``subtask_id`` exists."""

    subtask_id: int
    location: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestSplitEvent:
    """Reader → enumerator: ``SourceReaderContext.send_split_request``."""

    hostname: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceEventWrapper:
    """A user ``SourceEvent``, either way."""

    event: Any


@dataclass(frozen=True, slots=True, kw_only=True)
class AddSplitEvent:
    """Enumerator → reader: splits to read."""

    splits: tuple[Any, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class NoMoreSplitsEvent:
    """Enumerator → reader: no split will follow."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ReportedWatermarkEvent:
    """Reader → coordinator, every alignment update interval: the subtask's current watermark (FLIP-182)."""

    watermark: int


@dataclass(frozen=True, slots=True, kw_only=True)
class WatermarkAlignmentEvent:
    """Coordinator → reader: the highest watermark its alignment group allows now (the group's lowest plus the
    maximal drift); a reader whose watermark is above it stops reading until a later event allows more."""

    max_watermark: int
