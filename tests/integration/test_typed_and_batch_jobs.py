"""Declared types and BATCH execution on real TaskManagers: a value that does not fit its declared type fails
the job naming the operator and the record; typed state refuses what does not fit; BATCH gives final values per
key and windows without late drops across two TaskManagers, and refuses unbounded sources."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from strom import Configuration, InvalidProgramError, JobExecutionError, KeyedProcessFunction
from strom.common import Time, Types, WatermarkStrategy
from strom.connectors.file_system import FileSource, StreamFormat
from strom.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from strom.datastream.state import ValueStateDescriptor
from strom.datastream.window import TumblingEventTimeWindows


def env_with(parallelism: int) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration({"taskmanager.numberOfTaskSlots": 1, "minicluster.number-of-taskmanagers": 2})
    )
    env.set_parallelism(parallelism)
    return env


def _causes(exc: BaseException) -> str:
    text = []
    while exc is not None:
        text.append(str(exc))
        exc = exc.__cause__  # type: ignore[assignment]
    return "\n".join(text)


@pytest.mark.timeout(120)
def test_a_value_outside_its_declared_type_fails_the_job_naming_the_operator_and_the_record() -> None:
    env = env_with(2)
    (
        env.from_sequence(1, 100)
        .map(lambda n: (f"k{n}", n * 50_000_000), output_type=Types.TUPLE([Types.STRING(), Types.INT()]))
        .name("scale up")
        .print()
    )
    with pytest.raises(JobExecutionError) as info:
        env.execute("overflow")
    text = _causes(info.value)
    assert "operator 'scale up'" in text
    found = re.search(r"expected an int in \[-2147483648, 2147483647\] for INT; got (\d+)", text)
    assert found is not None and int(found.group(1)) > 2**31 - 1, text
    record = re.search(r"\('k(\d+)', (\d+)\)", text)  # the record, as a subtask's first that does not fit
    assert record is not None and int(record.group(2)) == int(record.group(1)) * 50_000_000 > 2**31 - 1, text


class Keep(KeyedProcessFunction):
    def open(self, runtime_context) -> None:  # type: ignore[no-untyped-def]
        self.last = runtime_context.get_state(ValueStateDescriptor("last", Types.LONG()))

    def process_element(self, value, ctx):  # type: ignore[no-untyped-def]
        self.last.update(value if value != 7 else "seven")
        yield value


@pytest.mark.timeout(120)
def test_typed_state_refuses_a_value_of_another_type_naming_the_state() -> None:
    env = env_with(2)
    env.from_sequence(1, 10).key_by(lambda v: v % 2).process(Keep()).print()
    with pytest.raises(JobExecutionError) as info:
        env.execute("typed state")
    assert "expected a value of BasicTypeInfo(Long) for state 'last'; got 'seven'" in _causes(info.value)


@pytest.mark.timeout(120)
def test_batch_mode_emits_one_final_value_per_key_and_fires_windows_without_late_drops() -> None:
    env = env_with(2)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    words = [f"w{i % 7}" for i in range(500)]
    counts = (
        env.from_collection(words)
        .map(lambda w: (w, 1), output_type=Types.TUPLE([Types.STRING(), Types.INT()]))
        .key_by(lambda t: t[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
    )
    # descending timestamps: in STREAMING all but the first window's records would be late
    events = [(f"k{i % 3}", 10_000 - i * 10) for i in range(900)]
    windows = (
        env.from_collection(events)
        .assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, _: e[1])
        )
        .key_by(lambda e: e[0])
        .window(TumblingEventTimeWindows.of(Time.seconds(1)))
        .reduce(lambda a, b: (a[0], min(a[1], b[1])))
        .map(lambda e: ("window", e[0], e[1] // 1000))
    )
    with counts.map(lambda t: ("count", t[0], t[1])).union(windows).execute_and_collect() as results:
        rows = Counter(results)
    expected_counts = Counter(words)
    expected_windows = {(k, t // 1000) for k, t in events}
    assert rows == Counter(
        [("count", w, n) for w, n in expected_counts.items()] + [("window", k, s) for k, s in expected_windows]
    )


def test_batch_mode_refuses_an_unbounded_source_before_the_job_starts(tmp_path: Path) -> None:
    env = env_with(1)
    env.set_runtime_mode("batch")
    source = (
        FileSource.for_record_stream_format(StreamFormat.text_line_format(), str(tmp_path))
        .monitor_continuously(Time.seconds(1))
        .build()
    )
    env.from_source(source, WatermarkStrategy.no_watermarks(), "endless").print()
    with pytest.raises(InvalidProgramError, match="got the unbounded source 'Source: endless'"):
        env.execute()
