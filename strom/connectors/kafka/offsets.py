"""Flink's ``OffsetsInitializer`` (PyFlink's ``KafkaOffsetsInitializer``): where a partition's split starts, or for a
bounded source where it stops, resolved by the enumerator when it discovers the partition.

    KafkaOffsetsInitializer.earliest()                   # the first offset the broker still has
    KafkaOffsetsInitializer.latest()                     # the offset the next record will get
    KafkaOffsetsInitializer.committed_offsets(KafkaOffsetResetStrategy.EARLIEST)  # the group's, else reset
    KafkaOffsetsInitializer.timestamp(1700000000000)     # the first record at or after a time (ms)
    KafkaOffsetsInitializer.offsets({KafkaTopicPartition("t", 0): 42})  # given offsets (others: earliest)
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from strom.exceptions import InvalidProgramError

__all__ = ["KafkaOffsetResetStrategy", "KafkaOffsetsInitializer", "KafkaTopicPartition"]


@dataclass(frozen=True, slots=True, order=True)
class KafkaTopicPartition:
    """PyFlink's ``KafkaTopicPartition``: a topic's partition."""

    topic: str
    partition: int


class KafkaOffsetResetStrategy(enum.Enum):
    """PyFlink's ``KafkaOffsetResetStrategy``: where a partition without a committed offset starts."""

    LATEST = "latest"
    EARLIEST = "earliest"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class KafkaOffsetsInitializer:
    """How the offsets of new splits are found (PyFlink's ``KafkaOffsetsInitializer``); build one with the static
    methods. ``kind`` is one of earliest, latest, committed, timestamp, specific."""

    kind: str
    reset: KafkaOffsetResetStrategy = KafkaOffsetResetStrategy.NONE
    timestamp_ms: int = 0
    specific: Mapping[tuple[str, int], int] = field(default_factory=dict)

    @staticmethod
    def earliest() -> KafkaOffsetsInitializer:
        return KafkaOffsetsInitializer("earliest")

    @staticmethod
    def latest() -> KafkaOffsetsInitializer:
        return KafkaOffsetsInitializer("latest")

    @staticmethod
    def committed_offsets(
        offset_reset_strategy: KafkaOffsetResetStrategy = KafkaOffsetResetStrategy.NONE,
    ) -> KafkaOffsetsInitializer:
        return KafkaOffsetsInitializer("committed", reset=offset_reset_strategy)

    @staticmethod
    def timestamp(timestamp: int) -> KafkaOffsetsInitializer:
        if isinstance(timestamp, bool) or not isinstance(timestamp, int) or timestamp < 0:
            raise InvalidProgramError(
                f"expected a timestamp in epoch milliseconds (an int >= 0); got {timestamp!r:.60}; "
                "hint: KafkaOffsetsInitializer.timestamp(1700000000000)"
            )
        return KafkaOffsetsInitializer("timestamp", timestamp_ms=timestamp)

    @staticmethod
    def offsets(
        offsets: Mapping[Any, int],
        offset_reset_strategy: KafkaOffsetResetStrategy = KafkaOffsetResetStrategy.EARLIEST,
    ) -> KafkaOffsetsInitializer:
        """Given offsets per partition (keys ``KafkaTopicPartition`` or ``(topic, partition)``); a partition not
        among them starts as ``offset_reset_strategy`` says."""
        specific: dict[tuple[str, int], int] = {}
        for key, offset in dict(offsets).items():
            topic, partition = (key.topic, key.partition) if isinstance(key, KafkaTopicPartition) else key
            specific[(str(topic), int(partition))] = int(offset)
        return KafkaOffsetsInitializer("specific", reset=offset_reset_strategy, specific=specific)


#: librdkafka's logical offsets
OFFSET_BEGINNING = -2
OFFSET_END = -1


def resolve_offsets(
    initializer: KafkaOffsetsInitializer, partitions: list[tuple[str, int]], consumer: Any, timeout_s: float
) -> dict[tuple[str, int], int]:
    """The initializer's offset for each partition, looked up with ``consumer`` (a confluent-kafka ``Consumer``,
    whose ``isolation.level`` decides what "latest" is); blocking I/O: the enumerator calls it in a worker."""
    from confluent_kafka import TopicPartition

    def watermark(tp: tuple[str, int], high: bool) -> int:
        low_high = consumer.get_watermark_offsets(TopicPartition(tp[0], tp[1]), timeout=timeout_s, cached=False)
        return int(low_high[1] if high else low_high[0])

    def reset(tp: tuple[str, int], strategy: KafkaOffsetResetStrategy) -> int:
        if strategy is KafkaOffsetResetStrategy.NONE:
            raise InvalidProgramError(
                f"expected a committed offset of the group for partition {tp[1]} of topic {tp[0]!r}; got none; "
                "hint: KafkaOffsetsInitializer.committed_offsets(KafkaOffsetResetStrategy.EARLIEST)"
            )
        return watermark(tp, strategy is KafkaOffsetResetStrategy.LATEST)

    kind = initializer.kind
    if kind in ("earliest", "latest"):
        return {tp: watermark(tp, kind == "latest") for tp in partitions}
    if kind == "specific":
        return {tp: initializer.specific[tp] if tp in initializer.specific else reset(tp, initializer.reset)
                for tp in partitions}  # fmt: skip
    if kind == "committed":
        found = consumer.committed([TopicPartition(t, p) for t, p in partitions], timeout=timeout_s)
        return {
            (tp.topic, tp.partition): tp.offset
            if tp.offset >= 0
            else reset((tp.topic, tp.partition), initializer.reset)
            for tp in found
        }
    if kind == "timestamp":
        query = [TopicPartition(t, p, initializer.timestamp_ms) for t, p in partitions]
        found = consumer.offsets_for_times(query, timeout=timeout_s)
        # no record at or after the time: the end of the partition (as Flink's TimestampOffsetsInitializer)
        return {(tp.topic, tp.partition): tp.offset if tp.offset >= 0 else watermark((tp.topic, tp.partition), True)
                for tp in found}  # fmt: skip
    raise InvalidProgramError(f"expected an offsets initializer kind; got {kind!r}")
