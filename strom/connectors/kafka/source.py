"""Flink's ``KafkaSource`` (FLIP-27): the records of Kafka topics, one split per partition, exactly-once through
the offsets in strom's checkpoints.

    source = (KafkaSource.builder()
              .set_bootstrap_servers("127.0.0.1:9092")
              .set_topics("input")
              .set_group_id("my-group")
              .set_starting_offsets(KafkaOffsetsInitializer.earliest())
              .set_value_only_deserializer(SimpleStringSchema())
              .build())
    stream = env.from_source(source, WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(5)), "kafka")

The enumerator (:mod:`strom.connectors.kafka.enumerator`) finds the partitions and gives each to a reader, which
``assign()``\\ s them to a confluent-kafka consumer of its own (no group membership) at the split's offset. Each
record's Kafka timestamp is its event timestamp (a ``WatermarkStrategy`` without an assigner uses it). As Flink's
``KafkaSource``, the ``WatermarkStrategy`` runs per partition: each partition has its own watermark generator and
the reader's watermark is the minimum over its partitions, so a partition behind in event time holds the
watermark back and one with no records for the strategy's ``with_idleness`` timeout does not (without
``with_idleness`` an empty partition holds it back, as in Flink). A reader's
checkpoint holds every split with the offset of the next record to read, so a restored (or rescaled) job reads on
exactly after its checkpoint; the offsets are committed to the group when the checkpoint completes
(``commit.offsets.on.checkpoint``, for monitoring: recovery never reads them). Consumers read with
``isolation.level=read_committed`` unless told otherwise. A bounded source (``set_bounded``) ends each split at its
stopping offset.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any

from strom.api.serialization_schema import ByteArraySchema, DeserializationSchema, SimpleStringSchema
from strom.api.source import Boundedness, Source, SourceReader, SourceReaderContext, SourceSplit
from strom.api.typeinfo import TypeInformation
from strom.connectors.kafka.client import client_config, confluent_kafka_module, list_topics
from strom.connectors.kafka.enumerator import EnumState, KafkaSourceEnumerator, split_of
from strom.connectors.kafka.offsets import KafkaOffsetsInitializer, KafkaTopicPartition
from strom.connectors.kafka.serialization import KafkaRecordDeserializationSchema
from strom.exceptions import ConnectorError, InvalidProgramError
from strom.runtime.streamrecord import SplitBatch, TimestampedBatch

__all__ = ["KafkaSource", "KafkaSourceBuilder"]

#: the consumer properties the source sets unless told otherwise (Flink's ``KafkaSourceBuilder`` defaults, and
#: ``read_committed``: transactional producers' aborted records never reach the job)
DEFAULTS = {"isolation.level": "read_committed", "partition.discovery.interval.ms": "300000"}
_PLACEHOLDER_GROUP = "strom-kafka-source"


class KafkaSource(Source[Any]):
    """Build one with :meth:`builder`."""

    def __init__(
        self,
        properties: dict[str, str],
        topics: list[str] | None,
        topic_pattern: str | None,
        partitions: list[tuple[str, int]] | None,
        starting_offsets: KafkaOffsetsInitializer,
        stopping_offsets: KafkaOffsetsInitializer | None,
        deserializer: KafkaRecordDeserializationSchema,
    ) -> None:
        self.properties = properties
        self.topics = topics
        self.topic_pattern = topic_pattern
        self.partitions = partitions
        self.starting_offsets = starting_offsets
        self.stopping_offsets = stopping_offsets
        self.deserializer = deserializer
        self.discovery_interval_ms = int(properties.get("partition.discovery.interval.ms", "300000"))
        self.commit_offsets = (
            str(properties.get("commit.offsets.on.checkpoint", "true")).lower() == "true"
            and properties.get("group.id") != _PLACEHOLDER_GROUP
        )

    @staticmethod
    def builder() -> KafkaSourceBuilder:
        return KafkaSourceBuilder()

    def get_produced_type(self) -> TypeInformation | None:
        """The value schema's type when it has one (Flink's ``ResultTypeQueryable``: the row formats), so a
        stream of rows prints as Flink's (``+I[1,hi]``)."""
        produced = getattr(self.deserializer.value_schema, "get_produced_type", None)
        return produced() if callable(produced) else None

    @property
    def boundedness(self) -> str:
        return Boundedness.BOUNDED if self.stopping_offsets is not None else Boundedness.CONTINUOUS_UNBOUNDED

    def validate(self) -> None:
        """The brokers answer (within ``request.timeout.ms``): a job whose brokers cannot be reached fails here,
        naming their addresses."""
        kafka = confluent_kafka_module()
        list_topics(kafka.admin.AdminClient(client_config(self._admin_properties())), self.properties)

    def _admin_properties(self) -> dict[str, str]:
        keep = ("bootstrap.servers", "security.protocol", "request.timeout.ms", "client.id")
        return {k: v for k, v in self.properties.items() if k in keep or k.startswith(("sasl.", "ssl."))}

    def create_enumerator(self, context: Any) -> KafkaSourceEnumerator:
        return KafkaSourceEnumerator(self, context)

    def restore_enumerator(self, context: Any, checkpoint: EnumState) -> KafkaSourceEnumerator:
        return KafkaSourceEnumerator(self, context, checkpoint)

    def create_reader(self, context: SourceReaderContext) -> SourceReader[Any]:
        return KafkaSourceReader(self, context)


class KafkaSourceReader(SourceReader[Any]):
    """Flink's ``KafkaSourceReader``: reads its partitions with one consumer; between polls on the task thread."""

    def __init__(self, source: KafkaSource, context: SourceReaderContext) -> None:
        self.source = source
        self.context = context
        schema = source.deserializer.value_schema
        self.deserialize = schema.deserialize
        self.deserialize_all = _deserializer_of_batches(schema)
        kafka = confluent_kafka_module()
        self._message: Any = kafka.Message
        self._topic_partition: Any = kafka.TopicPartition
        #: a schema of whole records (a table source's key, value and metadata) reads the messages themselves
        self.deserialize_records = (
            source.deserializer.deserialize_records if source.deserializer.reads_records else None
        )
        #: a row schema that skips what it cannot read (``ignore_parse_errors``, comment lines) returns None for
        #: it; as in Flink, such records are dropped
        self.skips_none = bool(
            getattr(schema, "ignore_parse_errors", False) or getattr(schema, "allow_comments", False)
        )
        self.positions: dict[tuple[str, int], int] = {}  # next offset to read, as of the last snapshot
        self.stops: dict[tuple[str, int], int] = {}  # bounded splits: the offset they end before
        self.no_more_splits = False
        self.pending_commits: dict[int, list[tuple[str, int, int]]] = {}
        self._consumer: Any = None
        #: per-partition watermarks: the operator's hooks (None under ``no_watermarks()`` or without a strategy)
        self.create_output_for_split = context.create_output_for_split
        self.release_output_for_split = context.release_output_for_split
        self.finished: list[tuple[str, int]] = []  # bounded splits ended by the last poll (their outputs go next)

    def _client(self) -> Any:
        if self._consumer is None:
            kafka = confluent_kafka_module()
            config = client_config(self.source.properties)
            config.update({"enable.auto.commit": False, "enable.auto.offset.store": False})
            self._consumer = kafka.Consumer(config)
        return self._consumer

    def add_splits(self, splits: Sequence[SourceSplit]) -> None:
        from confluent_kafka import TopicPartition

        assign = []
        for split in splits:
            topic, partition, start, stop = split.payload
            if stop is not None and start >= stop:
                continue  # a bounded split with nothing to read
            self.positions[(topic, partition)] = start
            if self.create_output_for_split is not None:
                self.create_output_for_split((topic, partition))
            if stop is not None:
                self.stops[(topic, partition)] = stop
            assign.append(TopicPartition(topic, partition, start))
        if assign:
            self._client().incremental_assign(assign)

    def notify_no_more_splits(self) -> None:
        self.no_more_splits = True

    def poll_batch(self) -> list[Any] | None:
        if self.finished:  # after their last records were emitted: they no longer hold the watermark back
            if self.release_output_for_split is not None:
                for key in self.finished:
                    self.release_output_for_split(key)
            self.finished.clear()
        if not self.positions:
            return None if self.no_more_splits else []
        consumer = self._client()
        one_split = next(iter(self.positions)) if len(self.positions) == 1 else None
        messages = consumer.consume(self.context.batch_size, 0)
        message = self._message
        # per record only calls into C (map over Message's methods): this loop is the source's hot path
        errors = list(map(message.error, messages))
        good = messages
        if errors.count(None) < len(errors):
            good = [m for m, e in zip(messages, errors, strict=True) if e is None]
            for m, e in zip(messages, errors, strict=True):
                if e is not None:
                    self._fail_on(m)
        if self.stops:
            good = self._within_stops(consumer, good)
        if not good:
            return []
        if self.deserialize_records is not None:
            values, good = self.deserialize_records(good)
            if not good:
                return []
        else:
            try:
                values = self.deserialize_all(list(map(message.value, good)))
            except Exception as exc:
                raise self._unreadable(good, exc) from exc
        if self.skips_none and any(v is None for v in values):
            kept = [i for i, v in enumerate(values) if v is not None]
            good, values = [good[i] for i in kept], [values[i] for i in kept]
            if not good:
                return []
        stamps = list(map(message.timestamp, good))
        timestamps: list[Any] = list(map(_second, stamps))
        if 0 in map(_first, stamps):  # TIMESTAMP_NOT_AVAILABLE: no event timestamp
            timestamps = [ts if kind else None for kind, ts in stamps]
        if self.create_output_for_split is None:
            return TimestampedBatch(values, timestamps)
        if one_split is not None:
            return SplitBatch(values, timestamps, [one_split] * len(values))
        return SplitBatch(values, timestamps, [(m.topic(), m.partition()) for m in good])

    def _unreadable(self, messages: list[Any], exc: Exception) -> ConnectorError:
        """The error of the first record the deserializer cannot read, naming where it is."""
        for message in messages:
            try:
                self.deserialize(message.value())
            except Exception:
                break
        return ConnectorError(
            f"expected a record {type(self.source.deserializer.value_schema).__name__} can read at topic "
            f"{message.topic()!r}, partition {message.partition()}, offset {message.offset()}; got "
            f"{type(exc).__name__}: {exc}; hint: fix the producer or use a deserializer for this data"
        )

    def _within_stops(self, consumer: Any, messages: list[Any]) -> list[Any]:
        """Bounded splits: the records before their stopping offsets; a split whose consumer position reached its
        stopping offset ends (a transaction's control record may hold that offset, so no record need have it)."""
        TopicPartition = self._topic_partition  # confluent-kafka's class, looked up once per reader
        stops = self.stops
        positions = consumer.position([TopicPartition(t, p) for (t, p) in stops])
        if any(tp.offset > stops[(tp.topic, tp.partition)] for tp in positions):  # this batch went past a stop
            messages = [m for m in messages if m.offset() < stops.get((m.topic(), m.partition()), 1 << 63)]
        done = []
        for tp in positions:
            key = (tp.topic, tp.partition)
            if tp.offset >= stops[key]:
                done.append(TopicPartition(tp.topic, tp.partition))
                del stops[key]
                del self.positions[key]
                self.finished.append(key)
        if done:
            consumer.incremental_unassign(done)
        return messages

    def _fail_on(self, message: Any) -> None:
        error = message.error()
        kafka = confluent_kafka_module()
        if error.code() == kafka.KafkaError._PARTITION_EOF:
            return
        if not error.fatal() and error.retriable():
            return  # librdkafka retries by itself
        raise ConnectorError(
            f"expected to read topic {message.topic()!r} partition {message.partition()} from "
            f"{self.source.properties.get('bootstrap.servers')}; got {error.str()}; hint: the job's restart strategy "
            "retries from its checkpoint"
        )

    def snapshot_state(self, checkpoint_id: int) -> list[SourceSplit]:
        self._sync_positions()
        splits = [split_of(t, p, offset, self.stops.get((t, p))) for (t, p), offset in self.positions.items()]
        if self.source.commit_offsets and self.positions:
            self.pending_commits[checkpoint_id] = [(t, p, offset) for (t, p), offset in self.positions.items()]
        return splits

    def _sync_positions(self) -> None:
        """The next offset of each split: the consumer's position (one past the last record ``consume`` returned,
        and every record returned was emitted before this snapshot), which also steps over control records; the
        split's start while nothing was read."""
        if self._consumer is None or not self.positions:
            return
        from confluent_kafka import TopicPartition

        for tp in self._consumer.position([TopicPartition(t, p) for (t, p) in self.positions]):
            key = (tp.topic, tp.partition)
            if tp.offset >= 0:
                stop = self.stops.get(key)
                self.positions[key] = max(self.positions[key], tp.offset if stop is None else min(tp.offset, stop))

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Flink's offset commit on checkpoint completion: the offsets of the checkpoint go to the group (for
        monitoring lag; recovery reads the checkpoint, never these), asynchronously."""
        offsets = self.pending_commits.pop(checkpoint_id, None)
        for older in [c for c in self.pending_commits if c < checkpoint_id]:
            del self.pending_commits[older]
        if offsets and self._consumer is not None:
            from confluent_kafka import TopicPartition

            self._consumer.commit(offsets=[TopicPartition(t, p, o) for t, p, o in offsets], asynchronous=True)

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None


_first, _second = itemgetter(0), itemgetter(1)


def _deserializer_of_batches(schema: DeserializationSchema) -> Callable[[list[Any]], list[Any]]:
    """The values of a batch of raw values: in C for the byte schemas (UTF-8 strings, bytes as they are), else the
    schema's ``deserialize`` per value."""
    if type(schema) is SimpleStringSchema and codecs.lookup(schema.charset).name == "utf-8":
        return lambda raws: list(map(bytes.decode, raws))
    if type(schema) is ByteArraySchema:
        return lambda raws: raws
    deserialize = schema.deserialize
    return lambda raws: list(map(deserialize, raws))


class KafkaSourceBuilder:
    """PyFlink's ``KafkaSourceBuilder``."""

    def __init__(self) -> None:
        self._properties: dict[str, str] = dict(DEFAULTS)
        self._topics: list[str] | None = None
        self._pattern: str | None = None
        self._partitions: list[tuple[str, int]] | None = None
        self._starting = KafkaOffsetsInitializer.earliest()
        self._stopping: KafkaOffsetsInitializer | None = None
        self._deserializer: KafkaRecordDeserializationSchema | None = None

    def set_bootstrap_servers(self, bootstrap_servers: str) -> KafkaSourceBuilder:
        return self.set_property("bootstrap.servers", bootstrap_servers)

    def set_group_id(self, group_id: str) -> KafkaSourceBuilder:
        return self.set_property("group.id", group_id)

    def set_client_id_prefix(self, prefix: str) -> KafkaSourceBuilder:
        return self.set_property("client.id", prefix)

    def set_topics(self, *topics: str) -> KafkaSourceBuilder:
        self._topics = [t for arg in topics for t in ([arg] if isinstance(arg, str) else arg)]
        self._pattern = self._partitions = None
        return self

    def set_topic_pattern(self, topic_pattern: str) -> KafkaSourceBuilder:
        re.compile(topic_pattern)
        self._pattern = topic_pattern
        self._topics = self._partitions = None
        return self

    def set_partitions(
        self, partitions: set[KafkaTopicPartition] | Sequence[KafkaTopicPartition]
    ) -> KafkaSourceBuilder:
        self._partitions = sorted({(p.topic, p.partition) for p in partitions})
        self._topics = self._pattern = None
        return self

    def set_starting_offsets(self, starting_offsets_initializer: KafkaOffsetsInitializer) -> KafkaSourceBuilder:
        self._starting = starting_offsets_initializer
        return self

    def set_bounded(self, stopping_offsets_initializer: KafkaOffsetsInitializer) -> KafkaSourceBuilder:
        self._stopping = stopping_offsets_initializer
        return self

    def set_unbounded(self, stopping_offsets_initializer: KafkaOffsetsInitializer | None = None) -> KafkaSourceBuilder:
        """Unbounded (the default). strom reads on past a stopping offset: one given here is not supported yet."""
        if stopping_offsets_initializer is not None:
            raise InvalidProgramError(
                "expected set_unbounded() without stopping offsets; got stopping offsets; hint: set_bounded(...) "
                "to stop at them (an unbounded source with stopping offsets is not built yet)"
            )
        self._stopping = None
        return self

    def set_value_only_deserializer(self, deserialization_schema: DeserializationSchema) -> KafkaSourceBuilder:
        self._deserializer = KafkaRecordDeserializationSchema.value_only(deserialization_schema)
        return self

    def set_deserializer(self, deserializer: KafkaRecordDeserializationSchema) -> KafkaSourceBuilder:
        self._deserializer = deserializer
        return self

    def set_property(self, key: str, value: str) -> KafkaSourceBuilder:
        self._properties[key] = str(value)
        return self

    def set_properties(self, props: dict[str, str]) -> KafkaSourceBuilder:
        for key, value in props.items():
            self.set_property(key, value)
        return self

    def build(self) -> KafkaSource:
        if not self._properties.get("bootstrap.servers"):
            raise InvalidProgramError(
                "expected KafkaSource.builder() to be given the brokers; got none; "
                "hint: set_bootstrap_servers('host:9092')"
            )
        if self._topics is None and self._pattern is None and self._partitions is None:
            raise InvalidProgramError(
                "expected KafkaSource.builder() to be given what to read; got none; "
                "hint: set_topics('input'), set_topic_pattern('in-.*') or set_partitions({...})"
            )
        if self._deserializer is None:
            raise InvalidProgramError(
                "expected KafkaSource.builder() to be given a deserializer; got none; "
                "hint: set_value_only_deserializer(SimpleStringSchema())"
            )
        properties = dict(self._properties)
        properties.setdefault("group.id", _PLACEHOLDER_GROUP)
        return KafkaSource(
            properties,
            self._topics,
            self._pattern,
            self._partitions,
            self._starting,
            self._stopping,
            self._deserializer,
        )
