"""Records/s through the Kafka connector against a plain confluent-kafka loop, on one throw-away broker (the tests'
noida-db, ``tests/kafka_broker.py``), paired in rounds (A, B, … then again):

    python benchmarks/kafka.py                 # 3 rounds, N = 3 000 000 records (--records), prints the table
    python benchmarks/kafka.py --quick         # smoke run (20 000 records, one round)
    python benchmarks/kafka.py --only sink     # only the sink runs (or: source, reader)
    python benchmarks/kafka.py --reader        # the source's reader alone (its poll loop) against the plain loop
    python benchmarks/kafka.py --profile       # ... and a cProfile of each job's task threads (not for figures)

* source: a bounded ``KafkaSource`` (SimpleStringSchema) at p=1 and p=2 into ``benchmarks/jobs.py``'s
  ``CountingSink`` (``records += len(batch)`` per batch: no Python call per record), against one consumer assigned
  every partition that decodes each value (``[m.value().decode() for m in consumer.consume(1000, 1.0) if m.error()
  is None]``) and counts them;
* sink: ``KafkaSink`` ``AT_LEAST_ONCE`` and ``EXACTLY_ONCE`` at p=1 (checkpoints every second) from
  ``from_sequence(0, N-1).map(value)``, against one producer sending the same strings (``produce(topic,
  value(i).encode())``) and flushing at the end.

**Throughput** is N ÷ (last record at the sink − first record read), so start-up is not in it; **start-up** (the
job's ``execute()`` — or the client's creation — to its first record) is reported apart. Stamps are taken in the
job with ``time.monotonic_ns()`` (system-wide, so they compare across processes): the source's first record is the
reader's first non-empty batch; the source job's last record is the counting sink's ``close``; the sink job's first
record is its writer's first batch, its last is acknowledged when the writer's last ``prepare_commit`` (after the
end-of-input flush) returns; EXACTLY_ONCE's records become visible at the commit after the final checkpoint
(``to commit``). **CPU** is the process CPU time (``time.process_time_ns``, librdkafka's threads included) over the
same interval: of the TaskManager processes for strom (per process, from its first stamp to its last), of this
process for the loop. Ratios are strom ÷ loop per round (records/s, or records per CPU-second); the table gives
their medians. The topic has 4 partitions; records are ~20-byte strings.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import text_table
from jobs import CountingSink, read_parts, write_part

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from kafka_broker import KafkaBroker

from strom.connectors.kafka.sink import KafkaSink
from strom.connectors.kafka.source import KafkaSource

PARTITIONS = 4


def _value(i: int) -> str:
    return f"record-{i:012d}"


@dataclass(frozen=True)
class Run:
    records: int
    seconds: float  # first record read -> last record at the sink (wall)
    cpu_s: float  # process CPU over that interval
    startup_s: float  # execute() (or the client's creation) -> first record read
    commit_s: float = 0.0  # EXACTLY_ONCE: last record acknowledged -> committed


# ---- the plain loops -----------------------------------------------------------------------------------------
def fill(broker: KafkaBroker, topic: str, n: int) -> None:
    broker.create_topic(topic, PARTITIONS)
    plain_produce(broker, topic, n)


def plain_produce(broker: KafkaBroker, topic: str, n: int) -> Run:
    from confluent_kafka import Producer

    t0 = time.monotonic()
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 5})
    t_first, cpu_first = time.monotonic(), time.process_time()
    for i in range(n):
        while True:
            try:
                producer.produce(topic, _value(i).encode())
                break
            except BufferError:
                producer.poll(0.05)
    assert producer.flush(60) == 0
    t_last, cpu_last = time.monotonic(), time.process_time()
    return Run(n, t_last - t_first, cpu_last - cpu_first, t_first - t0)


def plain_consume(broker: KafkaBroker, topic: str, n: int) -> Run:
    from confluent_kafka import Consumer, TopicPartition

    t0 = time.monotonic()
    consumer = Consumer(
        {"bootstrap.servers": broker.bootstrap_servers, "group.id": "bench", "enable.auto.commit": False,
         "isolation.level": "read_committed"}
    )  # fmt: skip
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    read = 0
    t_first = cpu_first = 0.0
    while read < n:
        values = [m.value().decode() for m in consumer.consume(1000, 1.0) if m.error() is None]
        if values and not read:
            t_first, cpu_first = time.monotonic(), time.process_time()
        read += len(values)
    t_last, cpu_last = time.monotonic(), time.process_time()
    consumer.close()
    return Run(read, t_last - t_first, cpu_last - cpu_first, t_first - t0)


# ---- the strom jobs, stamped ---------------------------------------------------------------------------------
def _stamp() -> dict[str, int]:
    return {"t": time.monotonic_ns(), "cpu": time.process_time_ns()}


#: --profile: cProfile (in the thread's CPU time) of the task thread from the first batch to the close, dumped into the
#: run's directory
PROFILE = {"on": False}


def _start_profile(profile: bool) -> Any:
    if not profile:
        return None
    import cProfile

    profiler = cProfile.Profile(time.thread_time)  # CPU, not wall: the machine may be shared
    profiler.enable()
    return profiler, _thread_cpu()


def _thread_cpu() -> dict[str, float]:
    """CPU seconds of this process's living threads since they started (Linux ``/proc``), by Python thread name;
    threads Python does not know (librdkafka's) are added up as ``native``."""
    import threading

    names = {t.native_id: t.name for t in threading.enumerate()}
    ticks = os.sysconf("SC_CLK_TCK")
    by_name: dict[str, float] = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            fields = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        name = names.get(int(tid), "native")
        by_name[name] = by_name.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / ticks  # utime + stime
    return by_name


def _dump_profile(started: Any, out_dir: str, role: str) -> None:
    """Before the reader's or writer's close: the profile, and the CPU of the threads still alive since it started."""
    if started is not None:
        profiler, before = started
        profiler.disable()
        profiler.dump_stats(os.path.join(out_dir, f"{role}-{os.getpid()}-{time.monotonic_ns()}.prof"))
        cpu = {name: s - before.get(name, 0.0) for name, s in _thread_cpu().items()}
        write_part(out_dir, "threads", {"cpu_s": cpu})


def _print_profiles(out_dir: str, title: str) -> None:
    import pstats

    files = [os.path.join(out_dir, f) for f in sorted(os.listdir(out_dir)) if f.endswith(".prof")]
    if files:
        print(f"--- cProfile of the task threads: {title}", file=sys.stderr)
        pstats.Stats(*files, stream=sys.stderr).sort_stats("tottime").print_stats(18)
    for part in read_parts(out_dir, "threads"):
        busy = [(k, round(v, 2)) for k, v in sorted(part["cpu_s"].items(), key=lambda kv: -kv[1])[:8]]
        print(f"CPU s by thread of TaskManager {part['pid']} (first batch to close): {busy}", file=sys.stderr)


class StampedKafkaSource(KafkaSource):
    """The KafkaSource whose readers stamp their first non-empty batch (one check per batch) and their close."""

    def __init__(self, source: KafkaSource, out_dir: str) -> None:
        s = source
        super().__init__(s.properties, s.topics, s.topic_pattern, s.partitions, s.starting_offsets,
                         s.stopping_offsets, s.deserializer)  # fmt: skip
        self.out_dir = out_dir
        self.profile = PROFILE["on"]

    def create_reader(self, context: Any) -> Any:
        reader = super().create_reader(context)
        poll_batch, close, stamps, profiler = reader.poll_batch, reader.close, {}, []

        def stamped_poll() -> Any:
            batch = poll_batch()
            if batch and not stamps:
                stamps["first"] = _stamp()
                profiler.append(_start_profile(self.profile))
            return batch

        def stamped_close() -> None:
            if stamps:
                _dump_profile(profiler[0], self.out_dir, "reader")
            close()
            if stamps:
                write_part(self.out_dir, "reader", {**stamps, "last": _stamp()})

        reader.poll_batch, reader.close = stamped_poll, stamped_close
        return reader


class StampedKafkaSink(KafkaSink):
    """The KafkaSink whose writers stamp their first batch and each ``prepare_commit`` (the last one follows the
    end-of-input flush), and whose committer stamps each commit."""

    def __init__(self, sink: KafkaSink, out_dir: str) -> None:
        super().__init__(sink.properties, sink.serializer, sink.guarantee, sink.transactional_id_prefix)
        self.out_dir = out_dir
        self.profile = PROFILE["on"]

    def restore_writer(self, context: Any, recovered_state: list[Any]) -> Any:
        writer = super().restore_writer(context, recovered_state)
        write_batch, prepare_commit, close, stamps = writer.write_batch, writer.prepare_commit, writer.close, {}
        profiler = []

        def first_batch(elements: list[Any]) -> None:
            stamps["first"] = _stamp()
            profiler.append(_start_profile(self.profile))
            writer.write_batch = write_batch
            write_batch(elements)

        def stamped_prepare() -> Any:
            committables = prepare_commit()
            stamps["last"] = _stamp()
            return committables

        def stamped_close() -> None:
            _dump_profile(profiler[0] if profiler else None, self.out_dir, "writer")
            close()
            write_part(self.out_dir, "writer", stamps)

        writer.write_batch, writer.prepare_commit, writer.close = first_batch, stamped_prepare, stamped_close
        return writer

    def create_committer(self) -> Any:
        committer = super().create_committer()
        commit = committer.commit

        def stamped_commit(requests: list[Any]) -> None:
            commit(requests)
            write_part(self.out_dir, "commit", {"last": _stamp()})

        committer.commit = stamped_commit
        return committer


def _job_run(out_dir: str, t0_ns: int, first_role: str, n: int) -> Run:
    """The run of the stamps the job wrote: first record to last, CPU per TaskManager process (first to last stamp
    of that process)."""
    parts = read_parts(out_dir, first_role)
    t_first = min(p["first"]["t"] for p in parts)
    if first_role == "reader":
        sinks = read_parts(out_dir, "sink")
        assert sum(s["records"] for s in sinks) == n, (sinks, n)
        t_last = max(s["t_close"] for s in sinks)
    else:
        t_last = max(p["last"]["t"] for p in parts)
    cpu = 0
    for pid in {p["pid"] for p in parts}:
        mine = [p for p in parts if p["pid"] == pid]
        cpu += max(p["last"]["cpu"] for p in mine) - min(p["first"]["cpu"] for p in mine)
    commits = [p["last"]["t"] for p in read_parts(out_dir, "commit")]
    commit_s = (max(commits) - t_last) / 1e9 if commits else 0.0
    return Run(n, (t_last - t_first) / 1e9, cpu / 1e9, (t_first - t0_ns) / 1e9, commit_s)


def strom_source(broker: KafkaBroker, topic: str, n: int, parallelism: int) -> Run:
    from strom.common import SimpleStringSchema, WatermarkStrategy
    from strom.datastream import StreamExecutionEnvironment
    from strom.datastream.connectors.kafka import KafkaOffsetsInitializer

    out_dir = tempfile.mkdtemp(prefix="bench-kafka-")
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
    stamped = StampedKafkaSource(source, out_dir)
    env.from_source(stamped, WatermarkStrategy.no_watermarks(), "kafka").sink_to(CountingSink(out_dir))
    t0 = time.monotonic_ns()
    env.execute("kafka source bench")
    try:
        _print_profiles(out_dir, f"KafkaSource p={parallelism}")
        return _job_run(out_dir, t0, "reader", n)
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


def strom_reader(broker: KafkaBroker, topic: str, n: int) -> Run:
    """``KafkaSourceReader.poll_batch`` until its bounded splits end, in this process: the per-record cost of the
    reader without the job around it."""
    from confluent_kafka import Consumer, TopicPartition

    from strom.api.source import SourceReaderContext
    from strom.common import SimpleStringSchema
    from strom.connectors.kafka.enumerator import split_of

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
    t0 = time.monotonic()
    reader = source.create_reader(SourceReaderContext(subtask_index=0, parallelism=1, batch_size=1000))
    reader.add_splits([split_of(topic, p, 0, ends[p]) for p in range(PARTITIONS)])
    reader.notify_no_more_splits()
    read = 0
    t_first = cpu_first = 0.0
    while (batch := reader.poll_batch()) is not None:
        if batch and not read:
            t_first, cpu_first = time.monotonic(), time.process_time()
        read += len(batch)
    t_last, cpu_last = time.monotonic(), time.process_time()
    reader.close()
    assert read == n, (read, n)
    return Run(n, t_last - t_first, cpu_last - cpu_first, t_first - t0)


def strom_sink(broker: KafkaBroker, topic: str, n: int, exactly_once: bool) -> Run:
    from strom.common import SimpleStringSchema
    from strom.datastream import StreamExecutionEnvironment
    from strom.datastream.connectors.kafka import DeliveryGuarantee, KafkaRecordSerializationSchema

    out_dir = tempfile.mkdtemp(prefix="bench-kafka-")
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
    env.from_sequence(0, n - 1).map(_value).sink_to(StampedKafkaSink(builder.build(), out_dir))
    t0 = time.monotonic_ns()
    env.execute("kafka sink bench")
    try:
        _print_profiles(out_dir, f"KafkaSink {guarantee.name}")
        return _job_run(out_dir, t0, "writer", n)
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


# ---- rounds and the table ------------------------------------------------------------------------------------
def _runs(broker: KafkaBroker, source_topic: str, n: int, r: int, only: str) -> dict[str, Callable[[], Run]]:
    def out(kind: str) -> str:
        return broker.create_topic(f"o-{kind}-{r}-{os.getpid()}", PARTITIONS)

    runs: dict[str, Callable[[], Run]] = {}
    if only in ("all", "source"):
        runs["source: plain consumer loop"] = lambda: plain_consume(broker, source_topic, n)
        runs["source: KafkaSource p=1"] = lambda: strom_source(broker, source_topic, n, 1)
        runs["source: KafkaSource p=2"] = lambda: strom_source(broker, source_topic, n, 2)
    if only == "reader":
        runs["source: plain consumer loop"] = lambda: plain_consume(broker, source_topic, n)
        runs["source: KafkaSourceReader alone"] = lambda: strom_reader(broker, source_topic, n)
    if only in ("all", "sink"):
        runs["sink: plain producer loop"] = lambda: plain_produce(broker, out("p"), n)
        runs["sink: KafkaSink AT_LEAST_ONCE p=1"] = lambda: strom_sink(broker, out("a"), n, False)
        runs["sink: KafkaSink EXACTLY_ONCE p=1"] = lambda: strom_sink(broker, out("e"), n, True)
    return runs


def _table(results: dict[str, list[Run]]) -> str:
    rows = []
    for name, runs in results.items():
        base = results["source: plain consumer loop" if name.startswith("source") else "sink: plain producer loop"]
        wall = statistics.median(b.seconds / s.seconds for b, s in zip(base, runs, strict=True))
        cpu = statistics.median(b.cpu_s / s.cpu_s for b, s in zip(base, runs, strict=True))
        rate = statistics.median(s.records / s.seconds for s in runs)
        rows.append([
            name, f"{rate:,.0f}", f"{wall:.2f}x", f"{statistics.median(s.cpu_s / s.records for s in runs) * 1e6:.2f}",
            f"{cpu:.2f}x", f"{statistics.median(s.startup_s for s in runs):.2f}",
            f"{statistics.median(s.commit_s for s in runs):.2f}" if any(s.commit_s for s in runs) else "-",
        ])  # fmt: skip
    header = ["run", "records/s (wall)", "vs loop (wall)", "CPU µs/record", "vs loop (CPU)", "start-up s",
              "to commit s"]  # fmt: skip
    return text_table(header, rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--records", type=int, default=3_000_000)
    parser.add_argument("--only", choices=["all", "source", "sink", "reader"], default="all")
    parser.add_argument("--reader", action="store_true", help="same as --only reader")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of each job's task threads")
    args = parser.parse_args(argv)
    PROFILE["on"] = args.profile
    n = 20_000 if args.quick else args.records
    rounds = 1 if args.quick else args.rounds
    only = "reader" if args.reader else args.only
    print(f"load average {os.getloadavg()}, N = {n:,}, {rounds} rounds", file=sys.stderr)
    broker = KafkaBroker.start()
    results: dict[str, list[Run]] = {}
    try:
        source_topic = f"bench-in-{n}"
        if only in ("all", "source", "reader"):
            fill(broker, source_topic, n)
        for r in range(rounds):
            for name, run in _runs(broker, source_topic, n, r, only).items():
                got = run()
                results.setdefault(name, []).append(got)
                print(
                    f"round {r + 1}: {name}: {got.records / got.seconds:,.0f} records/s, "
                    f"{got.cpu_s / got.records * 1e6:.2f} CPU µs/record, start-up {got.startup_s:.2f} s",
                    file=sys.stderr,
                )
    finally:
        broker.close()
    if results:
        print(_table(results))
    print(f"load average {os.getloadavg()}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
