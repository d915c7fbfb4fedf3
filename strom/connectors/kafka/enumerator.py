"""Flink's ``KafkaSourceEnumerator``: one split per topic partition, discovered when the source starts and again
every ``partition.discovery.interval.ms`` (unbounded sources), each given to a fixed reader.

The owner of a partition is Flink's ``getSplitOwner``: the topic's Java ``String.hashCode`` picks a start reader and
the partitions follow round-robin, so the same partition goes to the same subtask across restarts. A partition found
at the start begins at the source's starting offsets; one found later at its earliest offset (as Flink). Offsets are
resolved here, in a worker thread (``call_async``), so that every split a reader gets names concrete offsets. The
checkpoint holds the partitions already found and the splits not yet handed out; a bounded source tells each reader
"no more splits" once its splits are out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from strom.api.source import SourceSplit, SplitEnumerator, SplitEnumeratorContext
from strom.connectors.kafka.client import client_config, confluent_kafka_module, list_topics, request_timeout_s
from strom.connectors.kafka.offsets import KafkaOffsetsInitializer, resolve_offsets

if TYPE_CHECKING:
    from strom.connectors.kafka.source import KafkaSource

__all__ = ["KafkaSourceEnumerator", "java_string_hash", "split_owner"]

EnumState = tuple[list[tuple[str, int]], list[SourceSplit], bool]


def java_string_hash(s: str) -> int:
    """Java's ``String.hashCode`` (a signed 32-bit int over UTF-16 code units): stable across processes, unlike
    Python's ``hash``."""
    h = 0
    for unit in s.encode("utf-16-be").hex(" ", 2).split():
        h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def split_owner(topic: str, partition: int, num_readers: int) -> int:
    """Flink's ``KafkaSourceEnumerator.getSplitOwner``."""
    start = ((java_string_hash(topic) * 31) & 0x7FFFFFFF) % num_readers
    return (start + partition) % num_readers


def split_of(topic: str, partition: int, start: int, stop: int | None) -> SourceSplit:
    """A partition's split: payload ``(topic, partition, next offset, stopping offset or None)``."""
    return SourceSplit(split_id=f"{topic}-{partition}", payload=(topic, partition, start, stop))


class KafkaSourceEnumerator(SplitEnumerator[SourceSplit, EnumState]):
    def __init__(self, source: KafkaSource, context: SplitEnumeratorContext, state: EnumState | None = None) -> None:
        self.source = source
        self.context = context
        known, pending, initial_done = state if state is not None else ([], [], False)
        #: every partition found so far (replaced, never changed: the discovery thread reads it)
        self.known: frozenset[tuple[str, int]] = frozenset(known)
        self.pending: dict[int, list[SourceSplit]] = {}
        self.initial_done = initial_done
        self._consumer: Any = None
        for split in pending:
            self._add_pending(split)

    # -- discovery, in a worker thread -------------------------------------------------------------------------
    def _client(self) -> Any:
        if self._consumer is None:
            kafka = confluent_kafka_module()
            config = client_config(self.source.properties)
            self._consumer = kafka.Consumer({**config, "enable.auto.commit": False})
        return self._consumer

    def _matching(self, metadata: Any) -> set[tuple[str, int]]:
        source = self.source
        out: set[tuple[str, int]] = set()
        for name, topic in metadata.topics.items():
            if topic.error is not None:
                continue
            if source.topics is not None:
                wanted = name in source.topics
            elif source.topic_pattern is not None:
                wanted = not name.startswith("__") and re.fullmatch(source.topic_pattern, name) is not None
            else:
                wanted = any(t == name for t, _ in source.partitions or ())
            if wanted:
                out.update((name, p) for p in topic.partitions)
        if source.partitions is not None:
            out &= set(source.partitions)
        return out

    def _discover(self) -> list[SourceSplit]:
        source = self.source
        consumer = self._client()
        new = sorted(self._matching(list_topics(consumer, source.properties)) - self.known)
        if not new:
            return []
        timeout = request_timeout_s(source.properties)
        starting = source.starting_offsets if not self.initial_done else KafkaOffsetsInitializer.earliest()
        starts = resolve_offsets(starting, new, consumer, timeout)
        stops: Mapping[tuple[str, int], int | None] = (
            resolve_offsets(source.stopping_offsets, new, consumer, timeout)
            if source.stopping_offsets is not None
            else dict.fromkeys(new)
        )
        return [split_of(t, p, starts[(t, p)], stops[(t, p)]) for t, p in new]

    def _on_discovered(self, splits: list[SourceSplit] | None, error: BaseException | None) -> None:
        if error is not None:
            raise error
        for split in splits or ():
            topic, partition = split.payload[0], split.payload[1]
            self.known = self.known | {(topic, partition)}
            self._add_pending(split)
        self.initial_done = True
        self._assign_pending(set(self.context.registered_readers()))

    # -- assignment, on the event loop -------------------------------------------------------------------------
    def _add_pending(self, split: SourceSplit) -> None:
        owner = split_owner(split.payload[0], split.payload[1], max(self.context.current_parallelism(), 1))
        self.pending.setdefault(owner, []).append(split)

    def _assign_pending(self, readers: set[int]) -> None:
        for subtask in sorted(readers):
            for split in self.pending.pop(subtask, ()):
                self.context.assign_split(split, subtask)
            if self.initial_done and self.source.stopping_offsets is not None:
                self.context.signal_no_more_splits(subtask)

    def start(self) -> None:
        interval = self.source.discovery_interval_ms
        period = interval if interval > 0 and self.source.stopping_offsets is None else 0
        self.context.call_async(self._discover, self._on_discovered, 0, period)

    def add_reader(self, subtask_id: int) -> None:
        self._assign_pending({subtask_id})

    def handle_split_request(self, subtask_id: int, requester_hostname: str | None) -> None:
        """Nothing to do: splits are pushed to their owners."""

    def add_splits_back(self, splits: list[SourceSplit], subtask_id: int) -> None:
        for split in splits:
            self._add_pending(split)
        if subtask_id in self.context.registered_readers():
            self._assign_pending({subtask_id})

    def snapshot_state(self, checkpoint_id: int) -> EnumState:
        pending = [split for subtask in sorted(self.pending) for split in self.pending[subtask]]
        return sorted(self.known), pending, self.initial_done

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None
