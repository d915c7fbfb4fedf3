"""Records/s through the Kafka connector against a plain confluent-kafka loop, on one throw-away broker (the tests'
noida-db, ``tests/kafka_broker.py``), all in the same run:

    python benchmarks/kafka.py            # 3 rounds, N = 1 000 000 records (--records), prints the table
    python benchmarks/kafka.py --quick    # smoke run
    python benchmarks/kafka.py --reader   # the source's reader alone (its poll loop) against the plain loop

* source: a bounded ``KafkaSource`` (SimpleStringSchema) at p=1 and p=2 into a discarding sink, against one
  consumer assigned every partition that decodes each value;
* sink: ``KafkaSink`` ``AT_LEAST_ONCE`` and ``EXACTLY_ONCE`` at p=1 (checkpoints every second) from a number
  sequence, against one producer sending the same strings and flushing at the end.

A strom figure is N / the wall time of ``execute()``, cluster start-up (about a second) included; the loop's is N /
its own wall time. Ratios are paired within rounds. The topic has 4 partitions; records are ~20-byte strings.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from bench import text_table

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from kafka_broker import KafkaBroker

PARTITIONS = 4


def _value(i: int) -> str:
    return f"record-{i:012d}"


def fill(broker: KafkaBroker, topic: str, n: int) -> None:
    broker.create_topic(topic, PARTITIONS)
    plain_produce(broker, topic, n)


def plain_produce(broker: KafkaBroker, topic: str, n: int) -> float:
    from confluent_kafka import Producer

    t0 = time.perf_counter()
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 5})
    for i in range(n):
        while True:
            try:
                producer.produce(topic, _value(i).encode())
                break
            except BufferError:
                producer.poll(0.05)
    assert producer.flush(60) == 0
    return time.perf_counter() - t0


def plain_consume(broker: KafkaBroker, topic: str, n: int) -> float:
    from confluent_kafka import Consumer, TopicPartition

    t0 = time.perf_counter()
    consumer = Consumer(
        {"bootstrap.servers": broker.bootstrap_servers, "group.id": "bench", "enable.auto.commit": False,
         "isolation.level": "read_committed"}
    )  # fmt: skip
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    got: list[str] = []
    while len(got) < n:
        got.extend(m.value().decode() for m in consumer.consume(1000, 1.0) if m.error() is None)
    consumer.close()
    return time.perf_counter() - t0


def strom_source(broker: KafkaBroker, topic: str, n: int, parallelism: int) -> float:
    from strom.common import SimpleStringSchema, WatermarkStrategy
    from strom.datastream import StreamExecutionEnvironment
    from strom.datastream.connectors.kafka import KafkaOffsetsInitializer, KafkaSource

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    source = (
        KafkaSource.builder()
        .set_bootstrap_servers(broker.bootstrap_servers)
        .set_topics(topic)
        .set_bounded(KafkaOffsetsInitializer.latest())
        .set_value_only_deserializer(SimpleStringSchema())
        .build()
    )
    env.from_source(source, WatermarkStrategy.no_watermarks(), "kafka").filter(lambda v: False).print()
    t0 = time.perf_counter()
    env.execute("kafka source bench")
    return time.perf_counter() - t0


def strom_reader(broker: KafkaBroker, topic: str, n: int) -> float:
    """``KafkaSourceReader.poll_batch`` until its bounded splits end, in this process: the per-record cost of the
    reader without the job around it."""
    from confluent_kafka import Consumer, TopicPartition

    from strom.api.source import SourceReaderContext
    from strom.common import SimpleStringSchema
    from strom.connectors.kafka.enumerator import split_of
    from strom.datastream.connectors.kafka import KafkaSource

    probe = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "bench-ends"})
    ends = [probe.get_watermark_offsets(TopicPartition(topic, p))[1] for p in range(PARTITIONS)]
    probe.close()
    source = (
        KafkaSource.builder()
        .set_bootstrap_servers(broker.bootstrap_servers)
        .set_topics(topic)
        .set_value_only_deserializer(SimpleStringSchema())
        .build()
    )
    reader = source.create_reader(SourceReaderContext(subtask_index=0, parallelism=1, batch_size=1000))
    reader.add_splits([split_of(topic, p, 0, ends[p]) for p in range(PARTITIONS)])
    reader.notify_no_more_splits()
    t0 = time.perf_counter()
    read = 0
    while (batch := reader.poll_batch()) is not None:
        read += len(batch)
    elapsed = time.perf_counter() - t0
    reader.close()
    assert read == n, (read, n)
    return elapsed


def strom_sink(broker: KafkaBroker, topic: str, n: int, exactly_once: bool) -> float:
    from strom.common import SimpleStringSchema
    from strom.datastream import StreamExecutionEnvironment
    from strom.datastream.connectors.kafka import DeliveryGuarantee, KafkaRecordSerializationSchema, KafkaSink

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.enable_checkpointing(1000)
    guarantee = DeliveryGuarantee.EXACTLY_ONCE if exactly_once else DeliveryGuarantee.AT_LEAST_ONCE
    builder = (
        KafkaSink.builder()
        .set_bootstrap_servers(broker.bootstrap_servers)
        .set_record_serializer(
            KafkaRecordSerializationSchema.builder()
            .set_topic(topic)
            .set_value_serialization_schema(SimpleStringSchema())
            .build()
        )
        .set_delivery_guarantee(guarantee)
        .set_property("linger.ms", "5")
    )
    if exactly_once:
        builder.set_transactional_id_prefix(f"bench-{topic}")
    env.from_sequence(0, n - 1).map(_value).sink_to(builder.build())
    t0 = time.perf_counter()
    env.execute("kafka sink bench")
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--reader", action="store_true", help="only the source's reader against the plain loop")
    args = parser.parse_args(argv)
    n = 20_000 if args.quick else args.records
    rounds = 1 if args.quick else args.rounds
    broker = KafkaBroker.start()
    times: dict[str, list[float]] = {}
    try:
        source_topic = f"bench-in-{n}"
        fill(broker, source_topic, n)
        for r in range(rounds):
            runs = {
                "source: plain consumer loop": lambda: plain_consume(broker, source_topic, n),
                "source: KafkaSource p=1": lambda: strom_source(broker, source_topic, n, 1),
                "source: KafkaSource p=2": lambda: strom_source(broker, source_topic, n, 2),
                "sink: plain producer loop": lambda r=r: plain_produce(broker, broker.create_topic(f"o-p-{r}", 4), n),
                "sink: KafkaSink AT_LEAST_ONCE p=1": lambda r=r: strom_sink(
                    broker, broker.create_topic(f"o-a-{r}", 4), n, False
                ),
                "sink: KafkaSink EXACTLY_ONCE p=1": lambda r=r: strom_sink(
                    broker, broker.create_topic(f"o-e-{r}", 4), n, True
                ),
            }
            if args.reader:
                runs = {
                    "source: plain consumer loop": runs["source: plain consumer loop"],
                    "source: KafkaSourceReader alone": lambda: strom_reader(broker, source_topic, n),
                }
            for name, run in runs.items():
                times.setdefault(name, []).append(run())
                print(f"round {r + 1}: {name}: {n / times[name][-1]:,.0f} records/s", file=sys.stderr)
    finally:
        broker.close()
    rows = []
    for name, ts in times.items():
        base = "source: plain consumer loop" if name.startswith("source") else "sink: plain producer loop"
        ratio = statistics.median(b / t for b, t in zip(times[base], ts, strict=True))
        rows.append([name, f"{n / statistics.median(ts):,.0f}", f"{ratio:.2f}x"])
    print(text_table(["run", "records/s (median)", "vs plain loop"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
