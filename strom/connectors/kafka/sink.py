"""Flink's ``KafkaSink``: records to Kafka topics with no guarantee, at least once, or exactly once through Kafka
transactions.

    sink = (KafkaSink.builder()
            .set_bootstrap_servers("127.0.0.1:9092")
            .set_record_serializer(KafkaRecordSerializationSchema.builder().set_topic("out")
                                   .set_value_serialization_schema(SimpleStringSchema()).build())
            .set_delivery_guarantee(DeliveryGuarantee.EXACTLY_ONCE)
            .set_transactional_id_prefix("my-job")
            .build())

``NONE`` sends records as they come and flushes only at the end of input; ``AT_LEAST_ONCE`` also flushes at every
checkpoint barrier, so a completed checkpoint's records are all acknowledged. ``EXACTLY_ONCE`` is Flink's
two-phase commit: each subtask writes the records between two checkpoints in one transaction whose transactional id
is ``<prefix>-<subtask>-<n>`` (Flink's ``TransactionalIdFactory``; ``n`` is one more than the checkpoint before it),
flushes it at the barrier (pre-commit), and commits it when the checkpoint completes; the committable — transactional
id, producer id and epoch — is in the checkpoint. A restored subtask commits what its checkpoint covered and aborts
the transactions a failed attempt left open (Flink's ``TransactionAborter``). See docs/design.md, "Kafka", for how a
transaction prepared by a process that died is committed (the protocol's ``EndTxn``,
:mod:`strom.connectors.kafka.protocol`) and what that guarantee rests on.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import repeat
from operator import length_hint
from typing import Any

from strom.api.sink import (
    CommitRequest,
    Committer,
    PrecommittingSinkWriter,
    SinkWriterContext,
    StatefulSinkWriter,
    TwoPhaseCommittingSink,
)
from strom.connectors.kafka.client import client_config, confluent_kafka_module, list_topics, request_timeout_s
from strom.connectors.kafka.protocol import end_txn
from strom.connectors.kafka.serialization import (
    KafkaRecordSerializationSchema,
    ProducerRecord,
    serializer_of_batches,
)
from strom.connectors.redis.sink import DeliveryGuarantee
from strom.exceptions import ConnectorError, InvalidProgramError

__all__ = ["DeliveryGuarantee", "KafkaCommittable", "KafkaSink", "KafkaSinkBuilder"]

log = logging.getLogger(__name__)

#: transactional id -> (producer, producer id, epoch) of a transaction prepared in this process, kept alive until its
#: committer commits it with the client (a committer in another process sends EndTxn itself)
_PREPARED: dict[str, tuple[Any, int, int]] = {}
_PREPARED_LOCK = threading.Lock()
_PID = re.compile(r"Acquired PID\{Id:(\d+),Epoch:(\d+)\}")
#: Kafka error codes of an EndTxn whose producer epoch is no longer the id's: the id was taken over since
_FENCED = frozenset({47, 90})  # INVALID_PRODUCER_EPOCH, PRODUCER_FENCED
#: how long the broker keeps a transaction open (Kafka's default transaction.max.timeout.ms; librdkafka's default,
#: one minute, would abort a transaction whose checkpoint completes later)
TRANSACTION_TIMEOUT_MS = "900000"


@dataclass(frozen=True, slots=True)
class KafkaCommittable:
    """A prepared transaction (Flink's ``KafkaCommittable``)."""

    transactional_id: str
    producer_id: int
    epoch: int
    bootstrap_servers: str


class _ProducerLog:
    """librdkafka's log for one transactional producer: keeps the producer id and epoch it acquired (its ``eos``
    debug line ``Acquired PID{Id:..,Epoch:..}``: librdkafka has no call that returns them), passes warnings on."""

    __slots__ = ("pid",)

    def __init__(self) -> None:
        self.pid: tuple[int, int] | None = None

    def log(self, level: int, fmt: str, *args: Any) -> None:
        text = fmt % args if args else fmt
        if "Acquired PID" in text:
            found = _PID.search(text)
            if found:
                self.pid = (int(found[1]), int(found[2]))
        elif level >= logging.WARNING:
            log.log(level, "librdkafka: %s", text)


class KafkaSink(TwoPhaseCommittingSink[Any, KafkaCommittable]):
    """Build one with :meth:`builder`."""

    def __init__(
        self,
        properties: dict[str, str],
        serializer: KafkaRecordSerializationSchema,
        guarantee: DeliveryGuarantee,
        transactional_id_prefix: str | None,
    ) -> None:
        self.properties = properties
        self.serializer = serializer
        self.guarantee = guarantee
        self.transactional_id_prefix = transactional_id_prefix

    @staticmethod
    def builder() -> KafkaSinkBuilder:
        return KafkaSinkBuilder()

    def validate(self) -> None:
        """The brokers answer within ``request.timeout.ms``; a job whose brokers cannot be reached fails here."""
        kafka = confluent_kafka_module()
        keep = ("bootstrap.servers", "security.protocol", "request.timeout.ms", "client.id")
        admin = {k: v for k, v in self.properties.items() if k in keep or k.startswith(("sasl.", "ssl."))}
        list_topics(kafka.admin.AdminClient(admin), self.properties)

    def create_writer(self, context: SinkWriterContext) -> PrecommittingSinkWriter[Any, KafkaCommittable]:
        return self.restore_writer(context, [])

    def restore_writer(
        self, context: SinkWriterContext, recovered_state: list[Any]
    ) -> PrecommittingSinkWriter[Any, KafkaCommittable]:
        if self.guarantee is DeliveryGuarantee.EXACTLY_ONCE:
            return TransactionalKafkaWriter(self, context, recovered_state)
        return KafkaWriter(self, context)

    def create_committer(self) -> Committer[KafkaCommittable]:
        return KafkaCommitter(request_timeout_s(self.properties))


class KafkaWriter(PrecommittingSinkWriter[Any, KafkaCommittable]):
    """Flink's ``KafkaWriter`` for ``NONE`` and ``AT_LEAST_ONCE``: one producer; delivery errors fail the task at
    the next write or flush."""

    def __init__(self, sink: KafkaSink, context: SinkWriterContext) -> None:
        self.sink = sink
        self.context = context
        self.errors: list[str] = []
        self.timeout_s = request_timeout_s(sink.properties)
        self.producer: Any = None
        serializer = sink.serializer
        self.serialize_values = serializer_of_batches(serializer.value_schema)
        key_schema = serializer.key_schema
        self.serialize_keys = None if key_schema is None else serializer_of_batches(key_schema)

    def _config(self) -> dict[str, Any]:
        config = client_config(self.sink.properties)
        config.update({"delivery.report.only.error": True, "on_delivery": self._on_delivery})
        return config

    def _open(self) -> Any:
        self.producer = confluent_kafka_module().Producer(self._config())
        return self.producer

    def _on_delivery(self, error: Any, message: Any) -> None:
        if error is not None:
            self.errors.append(f"topic {message.topic()!r} partition {message.partition()}: {error.str()}")

    def write_batch(self, elements: list[Any]) -> None:
        producer = self.producer or self._open()
        schema = self.sink.serializer
        if schema.writes_records:  # a table sink's records: partition, timestamp, headers, tombstones
            self._write_records(producer, schema.serialize_records(elements, self))
            return
        values = self.serialize_values(elements)
        keys = None if self.serialize_keys is None else self.serialize_keys(elements)
        selector = schema.topic_selector
        topics = None if selector is None else list(map(str, map(selector, elements)))
        produce_all(producer, schema.topic, values, keys, topics)
        producer.poll(0)
        if self.errors:
            self._raise_delivery_errors()

    def _write_records(self, producer: Any, records: list[ProducerRecord]) -> None:
        produce = producer.produce
        for topic, value, key, partition, timestamp, headers in records:
            while True:
                try:
                    produce(topic, value, key, partition, timestamp=timestamp, headers=headers)
                    break
                except BufferError:  # the producer's queue is full: wait for deliveries (backpressure)
                    producer.poll(0.05)
        producer.poll(0)
        if self.errors:
            self._raise_delivery_errors()

    def write(self, element: Any) -> None:
        self.write_batch([element])

    def _raise_delivery_errors(self) -> None:
        errors, self.errors = self.errors, []
        raise ConnectorError(
            f"expected Kafka at {self.sink.properties.get('bootstrap.servers')} to take every record; got "
            f"{len(errors)} failed, first: {errors[0]}; hint: the job's restart strategy retries from its checkpoint"
        )

    def _flush(self) -> None:
        if self.producer is None:
            return
        left = self.producer.flush(self.timeout_s)
        if self.errors:
            self._raise_delivery_errors()
        if left:
            raise ConnectorError(
                f"expected Kafka at {self.sink.properties.get('bootstrap.servers')} to acknowledge every record "
                f"within {self.timeout_s:g} s (request.timeout.ms); got {left} unacknowledged; hint: is the broker up?"
            )

    def flush(self, end_of_input: bool) -> None:
        if end_of_input or self.sink.guarantee is DeliveryGuarantee.AT_LEAST_ONCE:
            self._flush()

    def prepare_commit(self) -> list[KafkaCommittable]:
        return []

    def close(self) -> None:
        producer, self.producer = self.producer, None
        if producer is not None:
            producer.flush(1.0)


class TransactionalKafkaWriter(KafkaWriter, StatefulSinkWriter[Any, tuple[int, int]]):
    """Flink's ``ExactlyOnceKafkaWriter``: a transaction per checkpoint, opened at the first record after a barrier.
    Its state is ``(subtask, parallelism)``, so that after a rescale down the subtasks that are gone have their
    lingering transactions aborted by the one that got their state."""

    def __init__(self, sink: KafkaSink, context: SinkWriterContext, recovered_state: list[Any]) -> None:
        super().__init__(sink, context)
        prefix = sink.transactional_id_prefix
        assert prefix is not None
        self.prefix = prefix
        self.restored = context.restored_checkpoint_id or 0
        self.number = self.restored + 1  # of the next transaction: one more than the checkpoint before it
        # lingering transactions of these subtask indexes are aborted at the first checkpoint
        self.abort_subtasks = {context.subtask_index} | {s for s, _ in recovered_state if s >= context.parallelism}
        self.aborted = False
        self.used: set[str] = set()
        self.pid_log = _ProducerLog()

    def _tid(self, subtask: int, number: int) -> str:
        return f"{self.prefix}-{subtask}-{number}"

    def _open(self) -> Any:
        tid = self._tid(self.context.subtask_index, self.number)
        _forget(tid)
        self.pid_log = _ProducerLog()
        config = self._config()
        config.setdefault("transaction.timeout.ms", TRANSACTION_TIMEOUT_MS)
        debug = config.get("debug")
        config.update({"transactional.id": tid, "logger": self.pid_log, "debug": f"{debug},eos" if debug else "eos"})
        producer = confluent_kafka_module().Producer(config)
        producer.init_transactions(self.timeout_s)  # fences and aborts what an earlier attempt left under this id
        producer.begin_transaction()
        self.producer = producer
        self.used.add(tid)
        return producer

    def flush(self, end_of_input: bool) -> None:
        """Nothing: ``prepare_commit`` flushes the transaction."""

    def prepare_commit(self) -> list[KafkaCommittable]:
        producer = self.producer
        if producer is None:
            return []  # no record since the last checkpoint: no transaction
        self._flush()
        tid = self._tid(self.context.subtask_index, self.number)
        if self.pid_log.pid is None:
            raise ConnectorError(
                f"expected librdkafka to log the producer id of transaction {tid!r}; got none; hint: a "
                "confluent-kafka whose log lacks 'Acquired PID' cannot run EXACTLY_ONCE here"
            )
        pid, epoch = self.pid_log.pid
        with _PREPARED_LOCK:
            _PREPARED[tid] = (producer, pid, epoch)
        self.producer = None
        return [KafkaCommittable(tid, pid, epoch, self.sink.properties["bootstrap.servers"])]

    def snapshot_state(self, checkpoint_id: int) -> list[tuple[int, int]]:
        if not self.aborted:
            self._abort_lingering(checkpoint_id)
        self.number = checkpoint_id + 1
        return [(self.context.subtask_index, self.context.parallelism)]

    def _abort_lingering(self, checkpoint_id: int) -> None:
        """Flink's ``TransactionAborter``: every id an earlier attempt may have used after the restored checkpoint
        is fenced (``init_transactions`` aborts its open transaction). An earlier attempt numbered its transactions
        at most one more than the last checkpoint it took, which is below ``checkpoint_id`` (the checkpoint
        coordinator's ids only grow), so the ids up to it are all there are."""
        kafka = confluent_kafka_module()
        config = client_config(self.sink.properties)
        for subtask in sorted(self.abort_subtasks):
            for number in range(self.restored + 1, checkpoint_id + 1):
                tid = self._tid(subtask, number)
                if tid in self.used:
                    continue
                _forget(tid)
                kafka.Producer({**config, "transactional.id": tid}).init_transactions(self.timeout_s)
        self.aborted = True

    def close(self) -> None:
        producer, self.producer = self.producer, None
        if producer is not None:
            try:
                producer.abort_transaction(1.0)
            except Exception as exc:  # the next attempt's init_transactions aborts it anyway
                log.debug("abort on close failed: %r", exc)


def produce_all(
    producer: Any, topic: str | None, values: list[bytes], keys: list[bytes] | None, topics: list[str] | None
) -> None:
    """Produces ``values[i]`` (keyed ``keys[i]``) to ``topics[i]``, or all to ``topic``, with no Python frame per
    record: ``map`` over ``produce`` drained by a zero-length deque. A full queue (``BufferError``) stops the ``map``
    at record ``k`` (every column's iterator is past it): ``k`` is retried while polling for deliveries
    (backpressure), then the ``map`` goes on from ``k + 1``."""
    produce = producer.produce
    value_it = iter(values)
    columns: list[Iterator[Any]] = [repeat(topic) if topics is None else iter(topics), value_it]
    if keys is not None:
        columns.append(iter(keys))
    while True:
        try:
            deque(map(produce, *columns), 0)
            return
        except BufferError:
            k = len(values) - length_hint(value_it) - 1
            record = [topic if topics is None else topics[k], values[k]] + ([] if keys is None else [keys[k]])
            while True:
                producer.poll(0.05)
                try:
                    produce(*record)
                    break
                except BufferError:
                    continue


def _forget(tid: str) -> None:
    """Drops this process's producer of a prepared transaction under ``tid`` (its id is about to be fenced)."""
    with _PREPARED_LOCK:
        _PREPARED.pop(tid, None)


class KafkaCommitter(Committer[KafkaCommittable]):
    """Flink's ``KafkaCommitter``: commits each prepared transaction — with its producer if it lives in this
    process, else by sending ``EndTxn`` for its producer id and epoch (a retry of a done commit is answered
    without error)."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s

    def commit(self, requests: list[CommitRequest[KafkaCommittable]]) -> None:
        for request in requests:
            c = request.committable
            with _PREPARED_LOCK:
                live = _PREPARED.pop(c.transactional_id, None)
            if live is not None and live[1:] == (c.producer_id, c.epoch):
                try:
                    live[0].commit_transaction(self.timeout_s)
                    continue
                except Exception as exc:
                    log.warning("committing %s with its producer failed (%r); sending EndTxn", c.transactional_id, exc)
            self._end_txn(request)

    def _end_txn(self, request: CommitRequest[KafkaCommittable]) -> None:
        c = request.committable
        error = end_txn(c.bootstrap_servers, c.transactional_id, c.producer_id, c.epoch, True, self.timeout_s)
        if error == 0:
            return
        if error in _FENCED:
            # the id has a newer epoch: a later transaction took it over, which happens only after this one ended
            log.warning(
                "transaction %s was fenced by a later one (error %d): committed before", c.transactional_id, error
            )
            request.signal_already_committed()
            return
        raise ConnectorError(
            f"expected Kafka to commit transaction {c.transactional_id!r} (producer id {c.producer_id}, epoch "
            f"{c.epoch}); got error code {error}; hint: a transaction the broker aborted (transaction.timeout.ms "
            "passed before its checkpoint completed) cannot be committed: raise transaction.timeout.ms"
        )


class KafkaSinkBuilder:
    """PyFlink's ``KafkaSinkBuilder``."""

    def __init__(self) -> None:
        self._properties: dict[str, str] = {}
        self._serializer: KafkaRecordSerializationSchema | None = None
        self._guarantee = DeliveryGuarantee.NONE
        self._prefix: str | None = None

    def set_bootstrap_servers(self, bootstrap_servers: str) -> KafkaSinkBuilder:
        return self.set_property("bootstrap.servers", bootstrap_servers)

    def set_delivery_guarantee(self, delivery_guarantee: DeliveryGuarantee) -> KafkaSinkBuilder:
        self._guarantee = delivery_guarantee
        return self

    def set_transactional_id_prefix(self, transactional_id_prefix: str) -> KafkaSinkBuilder:
        self._prefix = transactional_id_prefix
        return self

    def set_record_serializer(self, record_serializer: KafkaRecordSerializationSchema) -> KafkaSinkBuilder:
        self._serializer = record_serializer
        return self

    def set_property(self, key: str, value: str) -> KafkaSinkBuilder:
        self._properties[key] = str(value)
        return self

    def build(self) -> KafkaSink:
        if not self._properties.get("bootstrap.servers"):
            raise InvalidProgramError(
                "expected KafkaSink.builder() to be given the brokers; got none; "
                "hint: set_bootstrap_servers('host:9092')"
            )
        if not isinstance(self._serializer, KafkaRecordSerializationSchema):
            raise InvalidProgramError(
                f"expected a KafkaRecordSerializationSchema; got {self._serializer!r:.60}; hint: set_record_serializer("
                "KafkaRecordSerializationSchema.builder().set_topic(...).set_value_serialization_schema(...).build())"
            )
        if not isinstance(self._guarantee, DeliveryGuarantee):
            raise InvalidProgramError(
                f"expected a DeliveryGuarantee; got {self._guarantee!r:.60}; hint: DeliveryGuarantee.AT_LEAST_ONCE"
            )
        if self._guarantee is DeliveryGuarantee.EXACTLY_ONCE and not self._prefix:
            raise InvalidProgramError(
                "expected a transactional id prefix for an EXACTLY_ONCE KafkaSink; got none; hint: "
                "set_transactional_id_prefix('my-job'), unique among the jobs writing to the cluster"
            )
        return KafkaSink(dict(self._properties), self._serializer, self._guarantee, self._prefix)
