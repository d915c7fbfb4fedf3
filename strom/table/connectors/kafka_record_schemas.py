"""Flink's ``DynamicKafkaDeserializationSchema`` and ``DynamicKafkaRecordSerializationSchema``: a Kafka record ⇄ a
table row — key columns from the key format, value columns from the value format, metadata columns from the record.

Reading, the row is the physical columns (``key_projection`` positions from the key, ``value_projection`` positions
from the value; with ``value.fields-include`` = ``ALL`` the value's own copy of a key column wins, as in Flink),
then the requested metadata. A record without value is skipped, except in upsert mode, where it is a DELETE of its
key (a tombstone). Writing, an upsert sink writes a DELETE — and an UPDATE_BEFORE — as a tombstone (the key, no
value), and drops UPDATE_BEFORE rows where Flink's planner would not have generated them
(:mod:`strom.table.planner.update_kind_inference`); ``timestamp`` and ``headers`` metadata
columns become the record's timestamp and headers; ``sink.partitioner`` picks the partition.
"""

from __future__ import annotations

import datetime
import itertools
from collections.abc import Callable, Sequence
from typing import Any

from strom.api.row import RowKind, _create_row
from strom.api.serialization_schema import ByteArraySchema
from strom.connectors.kafka.client import request_timeout_s
from strom.connectors.kafka.serialization import (
    KafkaRecordDeserializationSchema,
    KafkaRecordSerializationSchema,
    ProducerRecord,
)
from strom.exceptions import ConnectorError
from strom.table.formats.row_data_format import RowDataFormat
from strom.table.runtime.watermark_assigner import to_epoch_millis

__all__ = ["READABLE_METADATA", "DynamicKafkaDeserializationSchema", "DynamicKafkaRecordSerializationSchema"]

_EPOCH = datetime.datetime(1970, 1, 1)
_TIMESTAMP_TYPES = ("NoTimestampType", "CreateTime", "LogAppendTime")


def _topic(m: Any) -> Any:
    return m.topic()


def _partition(m: Any) -> Any:
    return m.partition()


def _offset(m: Any) -> Any:
    return m.offset()


def _headers(m: Any) -> dict[str, bytes]:
    return {k: v for k, v in (m.headers() or [])}


def _leader_epoch(m: Any) -> Any:
    epoch = getattr(m, "leader_epoch", None)
    return epoch() if callable(epoch) else None


def _timestamp(m: Any) -> datetime.datetime:
    return _EPOCH + datetime.timedelta(milliseconds=m.timestamp()[1])


def _timestamp_type(m: Any) -> str:
    return _TIMESTAMP_TYPES[m.timestamp()[0]]


#: Flink's ``KafkaDynamicSource.ReadableMetadata``: key → (type, reader of a confluent-kafka Message)
READABLE_METADATA: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "topic": ("STRING NOT NULL", _topic),
    "partition": ("INT NOT NULL", _partition),
    "headers": ("MAP<STRING, BYTES> NOT NULL", _headers),
    "leader-epoch": ("INT", _leader_epoch),
    "offset": ("BIGINT NOT NULL", _offset),
    "timestamp": ("TIMESTAMP_LTZ(3) NOT NULL", _timestamp),
    "timestamp-type": ("STRING NOT NULL", _timestamp_type),
}


class DynamicKafkaDeserializationSchema(KafkaRecordDeserializationSchema):
    """Rows of a Kafka table from a batch of messages (see the module)."""

    reads_records = True

    def __init__(
        self,
        physical_arity: int,
        key_format: RowDataFormat | None,
        key_projection: Sequence[int],
        value_format: RowDataFormat,
        value_projection: Sequence[int],
        *,
        upsert: bool,
    ) -> None:
        self.value_schema = ByteArraySchema()
        self.physical_arity = physical_arity
        self.key_format = key_format
        self.key_projection = tuple(key_projection)
        self.value_format = value_format
        self.value_projection = tuple(value_projection)
        self.upsert = upsert
        self.metadata: tuple[Callable[[Any], Any], ...] = ()
        self.projection: Callable[[Any], Any] | None = None  # the table's computed columns (watermark push-down)

    def with_metadata(self, keys: Sequence[str]) -> None:
        self.metadata = tuple(READABLE_METADATA[k][1] for k in keys)

    def _row(self, message: Any, value: bytes | None) -> Any:
        values = self.value_format.deserialize(value) if value is not None else None
        if value is not None and values is None:
            return None  # ignore-parse-errors
        out: list[Any] = [None] * self.physical_arity
        if self.key_format is not None:
            key = message.key()
            keys = self.key_format.deserialize(key) if key is not None else None
            if keys is not None:
                for position, v in zip(self.key_projection, keys, strict=True):
                    out[position] = v
        if values is not None:
            for position, v in zip(self.value_projection, values, strict=True):
                out[position] = v
        for read in self.metadata:
            out.append(read(message))
        row = _create_row(None, out, RowKind.INSERT if values is not None else RowKind.DELETE)
        return row if self.projection is None else self.projection(row)

    def deserialize_records(self, messages: list[Any]) -> tuple[list[Any], list[Any]]:
        rows: list[Any] = []
        kept: list[Any] = []
        upsert = self.upsert
        for message in messages:
            value = message.value()
            if value is None and not upsert:
                continue  # Flink's DeserializationSchema collects nothing for a record without value
            try:
                row = self._row(message, value)
            except Exception as exc:
                raise ConnectorError(
                    f"expected a record the table's formats can read at topic {message.topic()!r}, partition "
                    f"{message.partition()}, offset {message.offset()}; got {type(exc).__name__}: {exc}; hint: set "
                    "'<format>.ignore-parse-errors' = 'true' to skip such records, or fix the producer"
                ) from exc
            if row is not None:
                rows.append(row)
                kept.append(message)
        return rows, kept


class DynamicKafkaRecordSerializationSchema(KafkaRecordSerializationSchema):
    """Kafka records of a table's rows (see the module)."""

    writes_records = True

    def __init__(
        self,
        topic: str,
        key_format: RowDataFormat | None,
        key_positions: Sequence[int],
        value_format: RowDataFormat,
        value_positions: Sequence[int],
        *,
        upsert: bool,
        partitioner: str,
        keep_update_before: bool = False,
    ) -> None:
        super().__init__(topic, None, ByteArraySchema(), None)
        self.key_format = key_format
        self.key_positions = tuple(key_positions)
        self.value_format = value_format
        self.value_positions = tuple(value_positions)
        self.upsert = upsert
        self.partitioner = partitioner
        self.drop_update_before = upsert and not keep_update_before
        self.timestamp_index: int | None = None
        self.headers_index: int | None = None
        self._partitions: list[int] | None = None
        self._round_robin: Any = None

    def with_metadata(self, keys: Sequence[str], first_index: int) -> None:
        for i, key in enumerate(keys):
            if key == "timestamp":
                self.timestamp_index = first_index + i
            elif key == "headers":
                self.headers_index = first_index + i

    def _partition_of(self, writer: Any) -> int:
        if self.partitioner == "default":
            return -1
        if self._partitions is None:
            topic = self.topic
            assert topic is not None
            metadata = writer.producer.list_topics(topic, timeout=request_timeout_s(writer.sink.properties))
            self._partitions = sorted(metadata.topics[topic].partitions)
            self._round_robin = itertools.cycle(self._partitions)
        partitions = self._partitions
        if self.partitioner == "fixed":  # Flink's FlinkFixedPartitioner
            index: int = writer.context.subtask_index
            return partitions[index % len(partitions)]
        chosen: int = next(self._round_robin)
        return chosen

    def serialize_records(self, elements: list[Any], writer: Any) -> list[ProducerRecord]:
        records: list[ProducerRecord] = []
        topic = self.topic
        assert topic is not None
        key_format, value_format = self.key_format, self.value_format
        for row in elements:
            kind = row._row_kind
            values = row._values
            if kind is RowKind.UPDATE_BEFORE and self.drop_update_before:
                continue
            if self.upsert and (kind is RowKind.DELETE or kind is RowKind.UPDATE_BEFORE):
                value = None
            else:
                value = value_format.serialize([values[i] for i in self.value_positions])
            key = key_format.serialize([values[i] for i in self.key_positions]) if key_format is not None else None
            timestamp = 0
            if self.timestamp_index is not None and values[self.timestamp_index] is not None:
                timestamp = to_epoch_millis(values[self.timestamp_index])
            headers = None
            if self.headers_index is not None and values[self.headers_index]:
                headers = list(values[self.headers_index].items())
            records.append((topic, value, key, self._partition_of(writer), timestamp, headers))
        return records
