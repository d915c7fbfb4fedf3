"""The Kafka sink writer's batch path without a broker: the values a batch serializer makes equal the schema's
``serialize`` per element, and ``produce_all`` produces every record once and in order when the producer's queue
fills up (``BufferError``) at any point, retrying the record it stopped at."""

from __future__ import annotations

from typing import Any

import pytest

from strom.api.serialization_schema import ByteArraySchema, SerializationSchema, SimpleStringSchema
from strom.connectors.kafka.serialization import serializer_of_batches
from strom.connectors.kafka.sink import produce_all


class _Shouty(str):
    def __str__(self) -> str:
        return self.upper()


class _Json(SerializationSchema):
    def serialize(self, element: Any) -> bytes:
        return repr(element).encode()


@pytest.mark.parametrize(
    ("schema", "elements"),
    [
        (SimpleStringSchema(), ["a", "héllo", "", 7, 2.5, None, _Shouty("x")]),
        (SimpleStringSchema("latin-1"), ["é", 3]),
        (ByteArraySchema(), [b"a", bytearray(b"bc"), b""]),
        (_Json(), [{"a": 1}, [2], "s"]),
    ],
)
def test_a_batch_serializer_makes_what_serialize_makes(schema: SerializationSchema, elements: list[Any]) -> None:
    assert serializer_of_batches(schema)(elements) == [schema.serialize(e) for e in elements]


class _FillingProducer:
    """A producer whose queue is full (``BufferError``) at the produce calls numbered in ``full``."""

    def __init__(self, full: set[int]) -> None:
        self.full = full
        self.calls = 0
        self.sent: list[tuple[Any, ...]] = []
        self.polls = 0

    def produce(self, *args: Any) -> None:
        self.calls += 1
        if self.calls in self.full:
            raise BufferError("Local: Queue full")
        self.sent.append(args)

    def poll(self, timeout: float) -> int:
        self.polls += 1
        return 0


@pytest.mark.parametrize("full", [set(), {1}, {3}, {10}, {3, 4, 5}, {2, 5, 7, 12}])
@pytest.mark.parametrize("keyed", [False, True])
@pytest.mark.parametrize("selected", [False, True])
def test_produce_all_sends_every_record_once_in_order(full: set[int], keyed: bool, selected: bool) -> None:
    values = [f"v{i}".encode() for i in range(9)]
    keys = [f"k{i}".encode() for i in range(9)] if keyed else None
    topics = [f"t{i % 2}" for i in range(9)] if selected else None
    producer = _FillingProducer(full)
    produce_all(producer, None if selected else "out", values, keys, topics)
    expected = [((topics[i] if topics else "out"), values[i], *([keys[i]] if keys else [])) for i in range(len(values))]
    assert producer.sent == expected
    assert producer.polls == len([c for c in full if c <= producer.calls])


def test_produce_all_of_nothing_produces_nothing() -> None:
    producer = _FillingProducer(set())
    produce_all(producer, "out", [], None, None)
    assert producer.sent == [] and producer.polls == 0
