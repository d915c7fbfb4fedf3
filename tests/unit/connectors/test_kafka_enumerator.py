"""The Kafka source's enumerator without a broker: Flink's split owners (a partition goes to the same reader in
every process, through Java's ``String.hashCode``), pending splits assigned when their reader registers, "no more
splits" only for a bounded source once its partitions are found, and its checkpoint restored at another
parallelism."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from strom.api.source import ReaderInfo, SourceSplit, SplitEnumeratorContext
from strom.common import SimpleStringSchema
from strom.connectors.kafka import KafkaOffsetsInitializer, KafkaSource
from strom.connectors.kafka.enumerator import KafkaSourceEnumerator, java_string_hash, split_of, split_owner


def test_java_string_hash_is_javas() -> None:
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("") == 0
    # values from Java's jshell: overflow past 32 bits, a negative hash, characters outside the BMP (UTF-16 pairs)
    assert java_string_hash("a-much-longer-topic-name") == 260706745
    assert java_string_hash("orders") == -1008770331
    assert java_string_hash("ü€𝄞x") == 536843550


def test_partitions_of_a_topic_go_round_robin_from_the_topics_start_reader() -> None:
    owners = [split_owner("orders", p, 3) for p in range(6)]
    start = ((java_string_hash("orders") * 31) & 0x7FFFFFFF) % 3
    assert owners == [(start + p) % 3 for p in range(6)]


class _Context(SplitEnumeratorContext):
    def __init__(self, parallelism: int) -> None:
        self.parallelism = parallelism
        self.readers: dict[int, ReaderInfo] = {}
        self.assigned: list[tuple[int, SourceSplit]] = []
        self.no_more: set[int] = set()
        self.calls: list[Callable[[], Any]] = []

    def current_parallelism(self) -> int:
        return self.parallelism

    def registered_readers(self) -> dict[int, ReaderInfo]:
        return self.readers

    def assign_split(self, split: SourceSplit, subtask_id: int) -> None:
        self.assigned.append((subtask_id, split))

    def signal_no_more_splits(self, subtask_id: int) -> None:
        self.no_more.add(subtask_id)

    def send_event_to_source_reader(self, subtask_id: int, event: Any) -> None:
        raise AssertionError("no events")

    def call_async(self, callable_: Any, handler: Any, initial_delay_ms: int = 0, period_ms: int = 0) -> None:
        self.calls.append(callable_)

    def run_in_coordinator_thread(self, runnable: Callable[[], None]) -> None:
        runnable()


def _source(bounded: bool) -> KafkaSource:
    builder = (
        KafkaSource.builder()
        .set_bootstrap_servers("127.0.0.1:1")
        .set_topics("t")
        .set_value_only_deserializer(SimpleStringSchema())
    )
    if bounded:
        builder.set_bounded(KafkaOffsetsInitializer.latest())
    return builder.build()


def test_splits_wait_for_their_reader_and_a_bounded_source_then_says_no_more() -> None:
    context = _Context(2)
    enumerator = KafkaSourceEnumerator(_source(bounded=True), context)
    enumerator.start()
    assert len(context.calls) == 1  # the first discovery; no periodic one for a bounded source
    context.readers[0] = ReaderInfo(0, "here")
    enumerator.add_reader(0)
    splits = [split_of("t", p, 0, 10) for p in range(4)]
    enumerator._on_discovered(splits, None)
    owned_by_0 = [s for s in splits if split_owner("t", s.payload[1], 2) == 0]
    assert context.assigned == [(0, s) for s in owned_by_0]
    assert context.no_more == {0}
    context.readers[1] = ReaderInfo(1, "here")
    enumerator.add_reader(1)
    assert sorted(s.split_id for _, s in context.assigned) == sorted(s.split_id for s in splits)
    assert context.no_more == {0, 1}


def test_an_unbounded_source_never_says_no_more_and_its_checkpoint_restores_at_another_parallelism() -> None:
    context = _Context(2)
    enumerator = KafkaSourceEnumerator(_source(bounded=False), context)
    splits = [split_of("t", p, 5, None) for p in range(4)]
    enumerator._on_discovered(splits, None)  # no reader registered yet: all pending
    state = enumerator.snapshot_state(1)
    assert state[0] == [("t", p) for p in range(4)] and len(state[1]) == 4
    context3 = _Context(3)
    context3.readers = {i: ReaderInfo(i, "here") for i in range(3)}
    restored = KafkaSourceEnumerator(_source(bounded=False), context3, state)
    for i in range(3):
        restored.add_reader(i)
    assert sorted((i, s.payload[1]) for i, s in context3.assigned) == sorted(
        (split_owner("t", p, 3), p) for p in range(4)
    )
    assert not context3.no_more
