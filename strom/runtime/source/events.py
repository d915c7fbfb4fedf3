"""The operator events between a source's coordinator (JobManager) and its readers (Flink's
``ReaderRegistrationEvent``, ``RequestSplitEvent``, ``AddSplitEvent``, ``NoMoreSplitsEvent``,
``SourceEventWrapper``). They travel pickled over the JobManager ↔ TaskManager RPC connections."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from strom.api.source import SourceEvent, SourceSplit

__all__ = [
    "AddSplitEvent",
    "NoMoreSplitsEvent",
    "ReaderRegistrationEvent",
    "RequestSplitEvent",
    "SourceEventWrapper",
]


# -- reader → coordinator ----------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ReaderRegistrationEvent:
    """A source subtask's reader is open (its restored splits added): the enumerator may assign to it."""

    subtask_id: int
    location: str


@dataclass(frozen=True, slots=True)
class RequestSplitEvent:
    hostname: str | None = None


# -- coordinator → reader ----------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class AddSplitEvent:
    splits: tuple[SourceSplit, ...]


@dataclass(frozen=True, slots=True)
class NoMoreSplitsEvent:
    pass


# -- both ways ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SourceEventWrapper:
    """A user's :class:`~strom.api.source.SourceEvent` between enumerator and reader."""

    event: SourceEvent | Any
