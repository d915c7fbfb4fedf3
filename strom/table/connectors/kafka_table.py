"""The ``kafka`` and ``upsert-kafka`` table connectors (Flink's ``KafkaDynamicTableFactory`` /
``UpsertKafkaDynamicTableFactory``, ``KafkaDynamicSource`` / ``KafkaDynamicSink``) over strom's ``KafkaSource`` and
``KafkaSink``.

``kafka`` reads an append-only table (one row per record) and writes inserts only; ``upsert-kafka`` reads the
topic from the earliest offset as an upsert changelog keyed by the PRIMARY KEY — a record is an upsert of its key, a
record without value (a tombstone) a DELETE — which :mod:`strom.table.runtime.changelog_normalize` (Flink's
ChangelogNormalize) turns into ``+I``/``-U``/``+U``/``-D``; it writes an updating query as upserts and tombstones.
Both read METADATA columns (``topic``, ``partition``, ``headers``, ``leader-epoch``, ``offset``, ``timestamp``,
``timestamp-type``) and write ``timestamp`` and ``headers``. A table's watermark runs inside the Kafka source, per
partition, as Flink's ``SupportsWatermarkPushDown``. Options: :mod:`strom.table.connectors.kafka_table_options`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from strom.table.connectors.abilities import SupportsReadingMetadata, SupportsWatermarkPushDown, SupportsWritingMetadata
from strom.table.connectors.base import DynamicTableSink, DynamicTableSource
from strom.table.connectors.kafka_record_schemas import (
    READABLE_METADATA,
    DynamicKafkaDeserializationSchema,
    DynamicKafkaRecordSerializationSchema,
)
from strom.table.connectors.kafka_table_options import (
    KAFKA_OPTIONS,
    UPSERT_KAFKA_OPTIONS,
    KafkaFormats,
    discovery_interval_ms,
    formats_of,
    parallelism_of,
    properties_of,
    single_topic,
    startup_offsets,
    stopping_offsets,
    topics_of,
    validate_kafka_options,
)
from strom.table.errors import ValidationException
from strom.table.types import DataType, parse_type

if TYPE_CHECKING:
    from strom.api.datastream import DataStream
    from strom.api.environment import StreamExecutionEnvironment
    from strom.api.eventtime import WatermarkStrategy
    from strom.table.catalog.catalog_manager import CatalogTable
    from strom.table.planner.logical import RowType

__all__ = ["KafkaDynamicSink", "KafkaDynamicSource"]

_WRITABLE = {"headers": "MAP<STRING, BYTES> NOT NULL", "timestamp": "TIMESTAMP_LTZ(3) NOT NULL"}
_GUARANTEES = ("at-least-once", "exactly-once", "none")


class KafkaDynamicSource(DynamicTableSource, SupportsReadingMetadata, SupportsWatermarkPushDown):
    def __init__(self, name: str, table: CatalogTable, physical: RowType, *, upsert: bool) -> None:
        self.name = name
        self.table = table
        self.physical = physical
        self.upsert = upsert
        self.insert_only = not upsert
        self.formats: KafkaFormats = formats_of(name, table, physical, upsert=upsert)
        self.topics, self.pattern = topics_of(name, table)
        self.starting = startup_offsets(name, table, upsert=upsert)
        self.stopping = stopping_offsets(name, table)
        self.bounded = self.stopping is not None
        self.metadata_keys: list[str] = []
        self.strategy: WatermarkStrategy[Any] | None = None
        self.projection: Callable[[Any], Any] | None = None

    @classmethod
    def create(cls, name: str, table: CatalogTable, row_type: RowType) -> KafkaDynamicSource:
        validate_kafka_options(name, "kafka", table, KAFKA_OPTIONS)
        if table.primary_key:
            fmt = table.options.get("value.format", table.options.get("format"))
            raise ValidationException(
                f"The Kafka table '{name}' with '{fmt}' format doesn't support defining PRIMARY KEY constraint on the "
                "table, because it can't guarantee the semantic of primary key; hint: use 'upsert-kafka'"
            )
        return cls(name, table, row_type, upsert=False)

    @classmethod
    def create_upsert(cls, name: str, table: CatalogTable, row_type: RowType) -> KafkaDynamicSource:
        validate_kafka_options(name, "upsert-kafka", table, UPSERT_KAFKA_OPTIONS)
        return cls(name, table, row_type, upsert=True)

    def list_readable_metadata(self) -> dict[str, DataType]:
        return {k: parse_type(t) for k, (t, _) in READABLE_METADATA.items()}

    def apply_readable_metadata(self, metadata_keys: list[str], produced_type: RowType) -> None:
        self.metadata_keys = list(metadata_keys)

    def apply_watermark(self, strategy: WatermarkStrategy[Any], projection: Callable[[Any], Any] | None) -> None:
        self.strategy = strategy
        self.projection = projection

    def _key_positions(self) -> tuple[int, ...]:
        """The primary key's positions in the emitted rows (after the computed columns when they run here)."""
        names = [c.name for c in self.table.columns] if self.projection is not None else list(self.physical.names)
        return tuple(names.index(k) for k in self.table.primary_key)

    def create_stream(self, env: StreamExecutionEnvironment, row_type: RowType) -> DataStream[Any]:
        from strom.api.eventtime import WatermarkStrategy
        from strom.connectors.kafka.source import KafkaSource

        formats = self.formats
        deserializer = DynamicKafkaDeserializationSchema(
            len(self.physical),
            formats.key_format,
            formats.key_positions,
            formats.value_format,
            formats.value_positions,
            upsert=self.upsert,
        )
        deserializer.with_metadata(self.metadata_keys)
        deserializer.projection = self.projection
        builder = KafkaSource.builder().set_properties(properties_of(self.table))
        if self.pattern is not None:
            builder.set_topic_pattern(self.pattern)
        else:
            builder.set_topics(*(self.topics or []))
        interval = discovery_interval_ms(self.table)
        if interval is not None:
            builder.set_property("partition.discovery.interval.ms", interval)
        builder.set_starting_offsets(self.starting).set_deserializer(deserializer)
        if self.stopping is not None:
            builder.set_bounded(self.stopping)
        strategy = self.strategy if self.strategy is not None else WatermarkStrategy.no_watermarks()
        stream = env.from_source(builder.build(), strategy, f"KafkaSource-{self.name}")
        parallelism = parallelism_of(self.table.options, "scan.parallelism")
        if parallelism is not None:
            stream.set_parallelism(parallelism)
        if self.upsert:
            from strom.table.runtime.changelog_normalize import changelog_normalize

            return changelog_normalize(stream, self._key_positions())
        return stream


class KafkaDynamicSink(DynamicTableSink, SupportsWritingMetadata):
    def __init__(self, name: str, table: CatalogTable, physical: RowType, *, upsert: bool) -> None:
        self.name = name
        self.table = table
        self.physical = physical
        self.upsert = upsert
        self.accepts_updates = upsert
        self.keeps_update_before = not upsert
        self.formats = formats_of(name, table, physical, upsert=upsert)
        self.topic = single_topic(name, table)
        options = table.options
        self.partitioner = options.get("sink.partitioner", "default")
        if self.partitioner not in ("default", "fixed", "round-robin"):
            raise ValidationException(
                f"Could not find and instantiate partitioner class '{self.partitioner}' (table '{name}'); expected "
                "'default', 'fixed' or 'round-robin' (a Java partitioner class has no meaning here)"
            )
        guarantee = options.get("sink.delivery-guarantee", options.get("sink.semantic", "at-least-once"))
        guarantee = guarantee.replace("_", "-").lower()
        if guarantee not in _GUARANTEES:
            raise ValidationException(
                f"expected 'sink.delivery-guarantee' one of {', '.join(_GUARANTEES)}; got '{guarantee}'"
            )
        self.guarantee = guarantee
        self.prefix = options.get("sink.transactional-id-prefix")
        if guarantee == "exactly-once" and not self.prefix:
            raise ValidationException(
                "sink.transactional-id-prefix must be specified when using DeliveryGuarantee.EXACTLY_ONCE "
                f"(table '{name}')."
            )
        self.metadata_keys: list[str] = []

    @classmethod
    def create(cls, name: str, table: CatalogTable, row_type: RowType) -> KafkaDynamicSink:
        validate_kafka_options(name, "kafka", table, KAFKA_OPTIONS)
        return cls(name, table, _physical(table, row_type), upsert=False)

    @classmethod
    def create_upsert(cls, name: str, table: CatalogTable, row_type: RowType) -> KafkaDynamicSink:
        validate_kafka_options(name, "upsert-kafka", table, UPSERT_KAFKA_OPTIONS)
        return cls(name, table, _physical(table, row_type), upsert=True)

    def list_writable_metadata(self) -> dict[str, DataType]:
        return {k: parse_type(t) for k, t in _WRITABLE.items()}

    def apply_writable_metadata(self, metadata_keys: list[str], consumed_type: RowType) -> None:
        self.metadata_keys = list(metadata_keys)

    def consume(self, stream: DataStream[Any], row_type: RowType) -> None:
        from strom.connectors.kafka.sink import DeliveryGuarantee, KafkaSink

        formats = self.formats
        serializer = DynamicKafkaRecordSerializationSchema(
            self.topic,
            formats.key_format,
            formats.key_positions,
            formats.value_format,
            formats.value_positions,
            upsert=self.upsert,
            partitioner=self.partitioner,
            keep_update_before=self.keeps_update_before,
        )
        serializer.with_metadata(self.metadata_keys, len(self.physical))
        properties = properties_of(self.table)
        properties.setdefault("partitioner", "murmur2_random")  # the Java client's partitioner of keyed records
        builder = KafkaSink.builder().set_record_serializer(serializer)
        for key, value in properties.items():
            builder.set_property(key, value)
        builder.set_delivery_guarantee(DeliveryGuarantee(self.guarantee))
        if self.prefix:
            builder.set_transactional_id_prefix(self.prefix)
        sink = stream.sink_to(builder.build()).name(f"Sink: KafkaSink-{self.name}")
        parallelism = parallelism_of(self.table.options, "sink.parallelism")
        if parallelism is not None:
            sink.set_parallelism(parallelism)


def _physical(table: CatalogTable, row_type: RowType) -> RowType:
    """The physical columns of a sink's consumed row type (its metadata columns left out)."""
    metadata = {c.name for c in table.columns if c.metadata is not None}
    kept = [(n, t) for n, t in zip(row_type.names, row_type.types, strict=True) if n not in metadata]
    return type(row_type)(tuple(n for n, _ in kept), tuple(t for _, t in kept))
