"""In-band events that travel between records on a channel (Flink's ``RuntimeEvent`` s)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["END_OF_PARTITION", "EndOfPartitionEvent", "RuntimeEvent"]


class RuntimeEvent:
    """Base of in-band events (barriers, watermarks and cancel markers join later)."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class EndOfPartitionEvent(RuntimeEvent):
    """The producer's last word on a subpartition."""


END_OF_PARTITION = EndOfPartitionEvent()
