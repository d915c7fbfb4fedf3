"""A Kafka-protocol broker for the tests: noida-db (PyPI ``noida-db``, a static binary, no JVM) as a child process
on a free port of 127.0.0.1 with a temporary data directory. The fixture ``kafka_broker`` (tests/conftest.py) gives
one broker per session; a test names its topics after itself (``.create_topic``), so tests do not share data.

Its known limits (issue 32): one broker, transactions never time out on the broker's side,
``transaction.timeout.ms`` at most 900000, the classic group protocol only."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
from processes import free_port

__all__ = ["KafkaBroker"]


def _binary() -> str:
    import noida_db

    exe = Path(noida_db.__file__).parent / "noida-db"
    if not exe.is_file():
        raise RuntimeError(f"expected the noida-db binary at {exe}; got none; hint: pip install noida-db==0.2.3")
    return str(exe)


@dataclass
class KafkaBroker:
    directory: str
    port: int
    process: subprocess.Popen[bytes] | None

    @classmethod
    def start(cls, timeout_s: float = 30.0) -> KafkaBroker:
        broker = cls(tempfile.mkdtemp(prefix="strom-kafka-"), free_port(), None)
        broker.start_again(timeout_s)
        return broker

    def start_again(self, timeout_s: float = 30.0) -> None:
        """Starts the binary itself (killing a wrapper would leave the broker running) on the same port and data."""
        command = [_binary(), "start", "--host", "127.0.0.1", "--only", "kafka", "--kafka-port", str(self.port)]
        command += ["--data-dir", f"{self.directory}/data"]
        with open(f"{self.directory}/broker.log", "ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout_s
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"noida-db exited with {self.process.returncode}; see {self.directory}/broker.log")
            try:
                self.admin().list_topics(timeout=1)
                return
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    @property
    def bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.port}"

    def admin(self) -> Any:
        from confluent_kafka.admin import AdminClient

        return AdminClient({"bootstrap.servers": self.bootstrap_servers})

    def create_topic(self, name: str, partitions: int) -> str:
        from confluent_kafka.admin import NewTopic

        admin = self.admin()  # kept alive until its futures are done
        for future in admin.create_topics([NewTopic(name, partitions, 1)]).values():
            future.result(timeout=30)
        return name

    def add_partitions(self, topic: str, total: int) -> None:
        from confluent_kafka.admin import NewPartitions

        admin = self.admin()
        for future in admin.create_partitions([NewPartitions(topic, total)]).values():
            future.result(timeout=30)

    def produce(self, topic: str, values: list[str], *, partitions: int, timestamp_ms: int | None = None) -> None:
        """``values[i]`` to partition ``i % partitions`` (non-transactional, acknowledged by the broker)."""
        from confluent_kafka import Producer

        producer = Producer({"bootstrap.servers": self.bootstrap_servers, "acks": "all", "linger.ms": 5})
        for i, value in enumerate(values):
            extra = {} if timestamp_ms is None else {"timestamp": timestamp_ms + i}
            while True:
                try:
                    producer.produce(topic, value.encode(), partition=i % partitions, **extra)
                    break
                except BufferError:
                    producer.poll(0.05)
        assert producer.flush(30) == 0

    def read_committed(self, topic: str, *, idle_s: float = 2.0) -> list[tuple[int, int, str]]:
        """Every committed record of ``topic`` as ``(partition, offset, value)``, read from the beginning with
        ``isolation.level=read_committed`` until nothing came for ``idle_s``."""
        from confluent_kafka import Consumer, TopicPartition

        consumer = Consumer(
            {"bootstrap.servers": self.bootstrap_servers, "group.id": f"check-{time.monotonic_ns()}",
             "isolation.level": "read_committed", "enable.auto.commit": False}
        )  # fmt: skip
        try:
            partitions = self.admin().list_topics(topic, timeout=10).topics[topic].partitions
            consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
            out: list[tuple[int, int, str]] = []
            last = time.monotonic()
            while time.monotonic() - last < idle_s:
                for message in consumer.consume(1000, 0.2):
                    if message.error() is None:
                        out.append((message.partition(), message.offset(), message.value().decode()))
                        last = time.monotonic()
            return out
        finally:
            consumer.close()

    def stop(self, *, graceful: bool = False) -> None:
        """Stops the broker: ``graceful`` with SIGTERM (it saves its state and exits), else SIGKILL to it and its
        process tree, as a crash. noida-db 0.2.3 loses on SIGKILL what it acknowledged since it last saved its
        state (records produced with ``acks=all`` a moment before): a broker *restart* in a test is graceful."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        if graceful:
            process.terminate()
            try:
                process.wait(timeout=30)
                return
            except subprocess.TimeoutExpired:
                pass
        try:
            tree = [psutil.Process(process.pid), *psutil.Process(process.pid).children(recursive=True)]
        except psutil.Error:
            tree = []
        for p in tree:
            with contextlib.suppress(psutil.Error):
                p.kill()
        process.wait(timeout=10)

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)
