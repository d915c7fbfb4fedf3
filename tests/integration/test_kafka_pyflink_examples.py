"""PyFlink's own Kafka example programs (``pyflink/examples/datastream/connectors/kafka_*.py`` of apache-flink 2.3)
run on strom with only ``pyflink`` → ``strom`` in their imports and the broker's address for their hardcoded
``localhost:9092``: each writes its rows to Kafka with a format (JSON, CSV, Avro, raw bytes, or key and value
from row fields) and reads them back (the reading job is unbounded, as PyFlink's: the test stops it once every row
was printed). The programs are read from an installed PyFlink (``make check-pyflink``: ``--pyflink-examples DIR``);
strom's own programs in PyFlink's style are ``examples/kafka_*.py`` (tests/integration/test_kafka_examples.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from kafka_broker import KafkaBroker

ROOT = Path(__file__).resolve().parents[2]


def run_until(script: Path, cwd: Path, expected: list[str], timeout_s: float = 150.0) -> str:
    """Run ``script``; once its output holds every line of ``expected`` (as a multiset; a printing subtask's
    ``2>`` prefix left out), stop it (the reading job of the examples never ends) and return the output."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    lines: list[str] = []
    missing = list(expected)
    with subprocess.Popen(
        [sys.executable, str(script)], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as proc:
        watchdog = threading.Timer(timeout_s, proc.kill)  # a silent hang ends too
        watchdog.start()
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.append(line.rstrip("\n"))
                printed = re.sub(r"^\d+> ", "", lines[-1])
                if printed in missing:
                    missing.remove(printed)
                if not missing:
                    break
        finally:
            watchdog.cancel()
            proc.kill()
    assert not missing, f"missing {missing} in the output:\n" + "\n".join(lines[-60:])
    return "\n".join(lines)


def as_strom_program(source: str, bootstrap_servers: str, tmp_path: Path, name: str) -> Path:
    """The program with ``pyflink`` → ``strom`` in its imports and the broker's address for ``localhost:9092``."""
    text = source.replace("from pyflink", "from strom").replace("import pyflink", "import strom")
    text = text.replace("localhost:9092", bootstrap_servers)
    script = tmp_path / name
    script.write_text(text)
    return script


ROWS = [(1, "hi"), (2, "hello"), (3, "hi"), (4, "hello"), (5, "hi"), (6, "hello"), (6, "hello")]


@pytest.mark.timeout(240)
@pytest.mark.pyflink
@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # the rows print as PyFlink prints them: the row kind, then the fields (the schemas' row types)
        ("kafka_json_format.py", [f"+I[{i},{s}]" for i, s in ROWS]),
        ("kafka_csv_format.py", [f"+I[{i},{s}]" for i, s in ROWS]),
        ("kafka_avro_format.py", [f"+I[{i},{s}]" for i, s in ROWS]),
        (
            "kafka_bytearray_format.py",
            ['{"id": 1, "country": "USA"}', '{"id": 2, "country": "Canada"}', '{"id": 3, "country": "Germany"}'],
        ),
    ],
)
def test_a_pyflink_kafka_example_writes_and_reads_back_its_rows(
    kafka_broker: KafkaBroker, tmp_path: Path, pyflink_examples: Path, name: str, expected: list[str]
) -> None:
    examples = pyflink_examples / "datastream" / "connectors"
    script = as_strom_program((examples / name).read_text(), kafka_broker.bootstrap_servers, tmp_path, name)
    out = run_until(script, tmp_path, ["start writing data to kafka", "start reading data from kafka", *expected])
    assert "Traceback" not in out, out


@pytest.mark.timeout(120)
@pytest.mark.pyflink
def test_pyflink_s_row_field_extractor_example_writes_keys_and_values(
    kafka_broker: KafkaBroker, tmp_path: Path, pyflink_examples: Path
) -> None:
    examples = pyflink_examples / "datastream" / "connectors"
    name = "kafka_row_field_extractor_example.py"
    kafka_broker.create_topic("row-extractor-example", 3)  # its instructions create the topic first
    script = as_strom_program((examples / name).read_text(), kafka_broker.bootstrap_servers, tmp_path, name)
    proc = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=100,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert proc.stdout.count("Sending: User=") == 4, proc.stdout
    from confluent_kafka import Consumer

    consumer = Consumer(
        {
            "bootstrap.servers": kafka_broker.bootstrap_servers,
            "group.id": "row-extractor-check",
            "auto.offset.reset": "earliest",
        }
    )
    consumer.subscribe(["row-extractor-example"])
    got: list[tuple[bytes, bytes]] = []
    deadline = time.monotonic() + 30
    while len(got) < 4 and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            got.append((message.key(), message.value()))
    consumer.close()
    assert sorted(k for k, _ in got) == [b"user-001", b"user-001", b"user-002", b"user-003"]
    assert b'{"type": "purchase", "item": "laptop", "price": 999.99}' in [v for _, v in got]
