"""FileSink bucket assigners, rolling policies (with the processing-time check) and OutputFileConfig, driven by
hand through the SinkWriterOperator (no cluster)."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from strom.api.row import Row
from strom.connectors.file_system import (
    BucketAssigner,
    BucketAssignerContext,
    DefaultRollingPolicy,
    Encoder,
    FileSink,
    JsonLinesEncoder,
    OnCheckpointRollingPolicy,
    OutputFileConfig,
    PartFileInfo,
    RollingPolicy,
)
from strom.connectors.file_system.bucket_assigners import JavaDatePattern
from strom.exceptions import ConnectorError, InvalidProgramError, UserFunctionError
from strom.runtime.operators.base import StreamingRuntimeContext, TaskInfo
from strom.runtime.operators.sink import SinkWriterOperator
from strom.runtime.tasks.processing_time_service import ProcessingTimeService

pytestmark = pytest.mark.timeout(30)

UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"  # Flink's part names carry UUID.toString()


class _Discard:
    def emit(self, batch: list[Any]) -> None:
        raise AssertionError("a sink emits nothing")


class _ManualClock:
    """The writer's monotonic clock and the task's processing time, moved by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now

    def millis(self) -> int:
        return int(self.now * 1000)


def _operator(sink: FileSink, timers: ProcessingTimeService | None = None) -> SinkWriterOperator:
    op = SinkWriterOperator(sink)
    op.checkpointing_enabled = True
    info = TaskInfo(
        job_id="job-1",
        job_name="files",
        task_name="Sink: Writer",
        subtask_index=0,
        parallelism=1,
        max_parallelism=128,
        attempt_number=0,
    )
    ctx = StreamingRuntimeContext(info, operator_name=op.name)
    if timers is not None:
        ctx.processing_time_service = timers
    op.setup(ctx, _Discard())
    op.initialize_state(None)
    op.open()
    return op


def _checkpoint(op: SinkWriterOperator, checkpoint_id: int) -> None:
    op.snapshot_state(checkpoint_id, checkpoint_id)
    op.notify_checkpoint_complete(checkpoint_id)


def _files(base: Path) -> dict[str, str]:
    """Every file under ``base`` (relative path -> text)."""
    out = {}
    for directory, _, names in os.walk(base):
        for n in names:
            p = Path(directory) / n
            out[str(p.relative_to(base))] = p.read_text()
    return out


# -- bucket assigners ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("pattern", "strftime", "expected"),
    [
        ("yyyy-MM-dd--HH", "%Y-%m-%d--%H", "2024-03-05--07"),
        ("yyyy/MM/dd/'hour='HH", "%Y/%m/%d/hour=%H", "2024/03/05/hour=07"),
        ("yy-MMM-dd EEE", "%y-%b-%d %a", "24-Mar-05 Tue"),
        ("yyyy-M-d H:m:s", None, "2024-3-5 7:8:9"),
        ("'it''s' 100%", "it's 100%%", "it's 100%"),
        ("HH.mm.ss.SSS", None, "07.08.09.123"),
    ],
)
def test_java_date_patterns_translate_to_strftime(pattern: str, strftime: str | None, expected: str) -> None:
    p = JavaDatePattern(pattern)
    assert p.strftime == strftime
    assert p.format(datetime(2024, 3, 5, 7, 8, 9, 123456)) == expected


def test_an_unknown_pattern_letter_is_an_error_naming_its_column() -> None:
    with pytest.raises(InvalidProgramError, match=r"'ww' in 'yyyy-ww' at column 6"):
        BucketAssigner.date_time_bucket_assigner("yyyy-ww")
    with pytest.raises(InvalidProgramError, match="unterminated quote"):
        JavaDatePattern("yyyy'T")


def test_the_date_time_bucket_is_the_processing_time_in_the_time_zone() -> None:
    moment = datetime(2024, 12, 31, 23, 30, tzinfo=UTC).timestamp()
    context = BucketAssignerContext(clock=lambda: moment)
    assert BucketAssigner.date_time_bucket_assigner().format_str == "yyyy-MM-dd--HH"
    utc = BucketAssigner.date_time_bucket_assigner("yyyy-MM-dd--HH", "UTC")
    tokyo = BucketAssigner.date_time_bucket_assigner("yyyy-MM-dd--HH", "Asia/Tokyo")
    assert utc.get_bucket_id("any", context) == "2024-12-31--23"
    assert tokyo.get_bucket_id("any", context) == "2025-01-01--08"
    assert tokyo.get_bucket_ids(["a", "b"], context) == ["2025-01-01--08"] * 2
    with pytest.raises(InvalidProgramError, match="time zone id"):
        BucketAssigner.date_time_bucket_assigner(timezone_id="Mars/Olympus")


def test_the_field_bucket_of_rows_dicts_objects_and_tuples() -> None:
    ctx = BucketAssignerContext()
    by_country = BucketAssigner.field_bucket_assigner("country")
    assert by_country.get_bucket_id(Row(country="de", id=1), ctx) == "de"
    assert by_country.get_bucket_id({"country": "fr"}, ctx) == "fr"
    assert by_country.get_bucket_id({"country": None}, ctx) == "null"
    assert BucketAssigner.field_bucket_assigner(1).get_bucket_id(("x", 7), ctx) == "7"
    with pytest.raises(ConnectorError, match=r"field 'country'; got \{'id': 1\}"):
        by_country.get_bucket_id({"id": 1}, ctx)


def test_records_go_to_their_buckets_one_open_part_each(tmp_path: Path) -> None:
    sink = (
        FileSink.for_row_format(str(tmp_path), JsonLinesEncoder())
        .with_bucket_assigner(BucketAssigner.field_bucket_assigner("country"))
        .build()
    )
    op = _operator(sink)
    op.process_batch([{"country": "de", "n": 1}, {"country": "fr", "n": 2}, {"country": "de", "n": 3}])
    op.process_batch([{"country": "de", "n": 4}])
    hidden = [p for p in _files(tmp_path) if "/." in p]
    assert sorted(p.split("/")[0] for p in hidden) == ["de", "fr"]  # one in-progress part per bucket
    op.finish()
    _checkpoint(op, 1)
    files = _files(tmp_path)
    assert all(re.match(rf"^(de|fr)/part-{UUID}-\d+$", p) for p in files), files
    de = [t for p, t in files.items() if p.startswith("de/")]
    assert de == ['{"country":"de","n":1}\n{"country":"de","n":3}\n{"country":"de","n":4}\n']
    op.close()


class _ByParity(BucketAssigner):
    def get_bucket_id(self, element: Any, context: BucketAssignerContext) -> str:
        return "even" if element % 2 == 0 else "odd/nested"


def test_a_user_bucket_assigner_may_nest_and_must_stay_under_the_base_path(tmp_path: Path) -> None:
    op = _operator(
        FileSink.for_row_format(str(tmp_path), Encoder.simple_string_encoder())
        .with_bucket_assigner(_ByParity())
        .build()
    )
    op.process_batch([1, 2, 3])
    op.finish()
    _checkpoint(op, 1)
    assert sorted((p.rsplit("/", 1)[0], t) for p, t in _files(tmp_path).items()) == [
        ("even", "2\n"),
        ("odd/nested", "1\n3\n"),
    ]
    op.close()

    class Escaping(BucketAssigner):
        def get_bucket_id(self, element: Any, context: BucketAssignerContext) -> str:
            return "../outside"

    op = _operator(
        FileSink.for_row_format(str(tmp_path / "b"), JsonLinesEncoder()).with_bucket_assigner(Escaping()).build()
    )
    with pytest.raises(UserFunctionError) as info:
        op.process_batch([{"id": 5}])
    assert "'../outside' for the record {'id': 5}" in str(info.value.__cause__)
    op.close()
    assert not (tmp_path / "outside").exists()


# -- rolling policies ------------------------------------------------------------------------------------------
def test_default_rolling_policy_accepts_bytes_millis_timedelta_and_flink_strings() -> None:
    a = RollingPolicy.default_rolling_policy(part_size="64 mb", rollover_interval="5 min", inactivity_interval="30 s")
    assert a == DefaultRollingPolicy(
        max_part_size_bytes=64 * 1024 * 1024, rollover_interval_ms=300_000, inactivity_interval_ms=30_000
    )
    b = RollingPolicy.default_rolling_policy(1024, timedelta(minutes=1), 500)
    assert (b.max_part_size_bytes, b.rollover_interval_ms, b.inactivity_interval_ms) == (1024, 60_000, 500)
    assert RollingPolicy.default_rolling_policy() == DefaultRollingPolicy()
    with pytest.raises(InvalidProgramError, match="rollover_interval must be milliseconds"):
        RollingPolicy.default_rolling_policy(rollover_interval="soon")
    with pytest.raises(InvalidProgramError, match="part_size must be a positive int"):
        RollingPolicy.default_rolling_policy(part_size=0)


def test_policies_decide_on_size_age_and_inactivity() -> None:
    p = RollingPolicy.default_rolling_policy(part_size=100, rollover_interval=1_000, inactivity_interval=300)
    part = PartFileInfo("", creation_time=0.0, last_update_time=0.0, size=90)
    assert p.should_roll_on_event(part, 20, 0.0) and not p.should_roll_on_event(part, 10, 0.0)
    assert not p.should_roll_on_processing_time(part, 299.0)
    assert p.should_roll_on_processing_time(part, 300.0)  # inactive
    part.last_update_time = 900.0
    assert not p.should_roll_on_processing_time(part, 999.0)
    assert p.should_roll_on_processing_time(part, 1_000.0)  # too old, although active
    on_checkpoint = RollingPolicy.on_checkpoint_rolling_policy()
    assert not on_checkpoint.should_roll_on_event(part, 10**9, 10**9)
    assert not on_checkpoint.should_roll_on_processing_time(part, 10**9)
    assert RollingPolicy.on_checkpoint_rolling_policy(part_size="1 kb") == OnCheckpointRollingPolicy(
        max_part_size_bytes=1024
    )


def test_inactive_and_old_parts_roll_on_processing_time_without_new_records(tmp_path: Path) -> None:
    clock = _ManualClock()
    timers = ProcessingTimeService(clock=clock.millis)
    sink = (
        FileSink.for_row_format(str(tmp_path), Encoder.simple_string_encoder())
        .with_rolling_policy(RollingPolicy.default_rolling_policy(rollover_interval=10_000, inactivity_interval=2_000))
        .with_bucket_assigner(BucketAssigner.field_bucket_assigner(0))
        .with_bucket_check_interval(500)
        .with_clock(clock)
        .build()
    )
    op = _operator(sink, timers)
    op.process_batch([("a", 1)])
    clock.now = 1.5
    op.process_batch([("b", 1)])
    clock.now = 2.0
    timers.fire_due()  # the task's loop: "a" got nothing for 2 s; no record arrived
    assert sorted(p for p in _files(tmp_path) if "/." in p)[0].startswith("a/.part-")
    op.snapshot_state(1, 1)
    rolled = op._pending[1]
    assert len(rolled) == 1  # "a" rolled by the timer; "b" stays open across the checkpoint
    op.notify_checkpoint_complete(1)
    assert [p.split("/")[0] for p in _files(tmp_path) if "/." in p] == ["b"]

    for second in range(1, 13):  # "c" gets a record every second: never inactive, rolls at 10 s of age
        clock.now = 2.0 + second
        op.process_batch([("c", second)])
        timers.fire_due()
    assert set(op._writer._parts) == {"c"}  # type: ignore[union-attr]  # "b", inactive for 2 s, rolled by the timer
    op.finish()
    _checkpoint(op, 2)
    c_parts = sorted(t for p, t in _files(tmp_path).items() if p.startswith("c/"))
    assert len(c_parts) == 2
    assert sorted(line for t in c_parts for line in t.splitlines()) == sorted(str(("c", s)) for s in range(1, 13))
    op.close()


def test_parts_roll_at_every_checkpoint_with_the_on_checkpoint_policy(tmp_path: Path) -> None:
    sink = (
        FileSink.for_row_format(str(tmp_path), JsonLinesEncoder())
        .with_rolling_policy(RollingPolicy.on_checkpoint_rolling_policy())
        .build()
    )
    op = _operator(sink)
    op.process_batch([1])
    _checkpoint(op, 1)
    op.process_batch([2])
    _checkpoint(op, 2)
    assert sorted(_files(tmp_path).values()) == ["1\n", "2\n"]
    op.close()


def test_the_default_policy_keeps_a_row_part_open_across_checkpoints(tmp_path: Path) -> None:
    op = _operator(FileSink.for_row_format(str(tmp_path), JsonLinesEncoder()).build())
    op.process_batch([1])
    _checkpoint(op, 1)
    op.process_batch([2])
    _checkpoint(op, 2)
    [(name, text)] = _files(tmp_path).items()
    assert "/." in name and name.endswith(".inprogress") and text == "1\n2\n"  # not visible yet
    op.finish()  # end of input rolls it
    _checkpoint(op, 3)
    assert sorted(_files(tmp_path).values()) == ["1\n2\n"]
    op.close()


# -- output file config ----------------------------------------------------------------------------------------
def test_output_file_config_builder_names_parts(tmp_path: Path) -> None:
    config = OutputFileConfig.builder().with_part_prefix("events").with_part_suffix(".jsonl").build()
    assert config == OutputFileConfig(part_prefix="events", part_suffix=".jsonl")
    assert (config.get_part_prefix(), config.get_part_suffix()) == ("events", ".jsonl")
    assert OutputFileConfig.builder().build() == OutputFileConfig()
    with pytest.raises(InvalidProgramError, match="without path separators"):
        OutputFileConfig.builder().with_part_suffix("x/y").build()
    op = _operator(FileSink.for_row_format(str(tmp_path), JsonLinesEncoder()).with_output_file_config(config).build())
    op.process_batch([{"k": 1}])
    op.finish()
    _checkpoint(op, 1)
    [name] = _files(tmp_path)
    assert re.match(rf"^\d{{4}}-\d{{2}}-\d{{2}}--\d{{2}}/events-{UUID}-0\.jsonl$", name)  # Flink's default bucket
    op.close()
