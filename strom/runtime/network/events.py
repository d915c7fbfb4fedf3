"""In-band events that travel between records on a channel (Flink's ``RuntimeEvent`` s)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "END_OF_PARTITION",
    "CancelCheckpointMarker",
    "CheckpointBarrier",
    "CheckpointOptions",
    "EndOfData",
    "EndOfPartitionEvent",
    "RuntimeEvent",
    "WatermarkEvent",
    "WatermarkStatusEvent",
    "is_priority_event",
]


class RuntimeEvent:
    """Base of in-band events."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class EndOfPartitionEvent(RuntimeEvent):
    """The producer's last word on a subpartition."""


END_OF_PARTITION = EndOfPartitionEvent()


@dataclass(frozen=True, slots=True)
class EndOfData(RuntimeEvent):
    """The producer will send no more records, only checkpoint barriers, then EndOfPartition (Flink's
    ``EndOfData``, FLIP-147): its consumers finish their operators now, so that a final checkpoint covers
    everything they emit on finish — and commits it — before the tasks end."""


@dataclass(frozen=True, slots=True)
class CheckpointOptions:
    """How a checkpoint is taken: its kind and whether barriers align (Flink's ``CheckpointOptions``)."""

    is_savepoint: bool = False
    exactly_once: bool = True
    #: barriers overtake in-flight buffers, which the checkpoint persists as channel state (FLIP-76)
    unaligned: bool = False
    #: where the tasks write their state (a picklable CheckpointStorageLocation)
    location: object = None
    #: an aligned barrier that may time out (Flink's ``CheckpointOptions.forTimeoutableAlignedCheckpoint``): a task
    #: whose alignment lasts longer — or whose first barrier comes later after the trigger — switches to unaligned
    aligned_timeout_ms: int = 0

    def to_unaligned(self) -> CheckpointOptions:
        """The options of a timed-out alignment: the checkpoint goes on unaligned (still marked timeoutable, so that
        downstream tasks turn the aligned barriers still queued in their other channels into priority events)."""
        return CheckpointOptions(self.is_savepoint, self.exactly_once, True, self.location, self.aligned_timeout_ms)


@dataclass(frozen=True, slots=True)
class CheckpointBarrier(RuntimeEvent):
    """Separates the records of checkpoint ``checkpoint_id`` from those after it."""

    checkpoint_id: int
    timestamp_ms: int
    options: CheckpointOptions


def is_priority_event(event: object) -> bool:
    """An event that overtakes the data queued ahead of it, in the producer's subpartition and in the consumer's
    input channel (Flink's ``EventAnnouncement``/priority events): the barrier of an unaligned checkpoint."""
    return type(event) is CheckpointBarrier and event.options.unaligned


@dataclass(frozen=True, slots=True)
class CancelCheckpointMarker(RuntimeEvent):
    """Checkpoint ``checkpoint_id`` was aborted upstream: stop aligning for it and pass the marker on."""

    checkpoint_id: int


@dataclass(frozen=True, slots=True)
class WatermarkEvent(RuntimeEvent):
    """Event time on this channel has reached ``timestamp``: no record with a timestamp ``<= timestamp`` follows
    (Flink's ``Watermark`` stream element). The writer flushes the records before it, so it never overtakes them."""

    timestamp: int


@dataclass(frozen=True, slots=True)
class WatermarkStatusEvent(RuntimeEvent):
    """The channel turned IDLE (``idle``) or ACTIVE again (Flink's ``WatermarkStatus`` stream element)."""

    idle: bool
