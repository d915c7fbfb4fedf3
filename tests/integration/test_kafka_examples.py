"""strom's Kafka example (examples/kafka_row_formats.py, PyFlink's format examples in PyFlink's style) runs against
the test broker — its address through ``KAFKA_BOOTSTRAP_SERVERS`` — and prints every row it wrote, in each format."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from kafka_broker import KafkaBroker

ROOT = Path(__file__).resolve().parents[2]
ROWS = [(1, "hi"), (2, "hello"), (3, "hi"), (4, "hello"), (5, "hi"), (6, "hello"), (6, "hello")]


@pytest.mark.timeout(240)
def test_the_row_formats_example_writes_and_reads_back_json_csv_and_avro(
    kafka_broker: KafkaBroker, tmp_path: Path
) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "KAFKA_BOOTSTRAP_SERVERS": kafka_broker.bootstrap_servers}
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "kafka_row_formats.py")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=220,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    printed = Counter(re.sub(r"^\d+> ", "", line) for line in proc.stdout.splitlines())
    names = {"json": ("f0", "f1"), "csv": ("f0", "f1"), "avro": ("id", "name")}
    for fmt, (a, b) in names.items():
        expected = Counter(f"example_{fmt}_topic: Row({a}={i}, {b}='{s}')" for i, s in ROWS)
        assert {line: printed[line] for line in expected} == dict(expected), proc.stdout
