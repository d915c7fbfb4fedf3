"""FileSource's enumerators driven through a recording SplitEnumeratorContext (no JobManager): every file or
row group assigned exactly once, waiting readers served when the listing lands, new files picked up by the
continuous enumerator each once, also across a restore from its checkpoint; and validate() at execute()."""

from __future__ import annotations

import pickle
import sys
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from strom.api.source import ReaderInfo, SourceEvent, SourceReaderContext, SourceSplit, SplitEnumeratorContext
from strom.connectors.file_system import (
    ContinuousFileSplitEnumerator,
    FileSource,
    FileSourceSplit,
    StaticFileSplitEnumerator,
    StreamFormat,
)
from strom.exceptions import ConnectorError, InvalidProgramError
from strom.formats import ParquetColumnarRowInputFormat


class RecordingContext(SplitEnumeratorContext):
    """Records assignments; ``call_async`` work runs when the test says (``run_async``), as a worker would."""

    def __init__(self, parallelism: int, readers: int | None = None) -> None:
        self.parallelism = parallelism
        self.readers = {i: ReaderInfo(i, "localhost") for i in range(parallelism if readers is None else readers)}
        self.assigned: list[tuple[int, FileSourceSplit]] = []
        self.no_more: set[int] = set()
        self.calls: list[tuple[Callable[[], Any], Callable[[Any, BaseException | None], None], int]] = []

    def current_parallelism(self) -> int:
        return self.parallelism

    def registered_readers(self) -> dict[int, ReaderInfo]:
        return dict(self.readers)

    def assign_split(self, split: SourceSplit, subtask_id: int) -> None:
        assert subtask_id in self.readers, "assigned to a reader that is not registered"
        assert subtask_id not in self.no_more, "assigned after no more splits"
        assert isinstance(split, FileSourceSplit)
        self.assigned.append((subtask_id, split))

    def signal_no_more_splits(self, subtask_id: int) -> None:
        self.no_more.add(subtask_id)

    def send_event_to_source_reader(self, subtask_id: int, event: SourceEvent) -> None:
        raise AssertionError("the file source sends no events")

    def call_async(
        self,
        callable_: Callable[[], Any],
        handler: Callable[[Any, BaseException | None], None],
        initial_delay_ms: int = 0,
        period_ms: int = 0,
    ) -> None:
        self.calls.append((callable_, handler, period_ms))

    def run_in_coordinator_thread(self, runnable: Callable[[], None]) -> None:
        runnable()

    def run_async(self) -> None:
        """Run each registered call once (a periodic one stays registered)."""
        calls, self.calls = self.calls, [c for c in self.calls if c[2] > 0]
        for callable_, handler, _ in calls:
            try:
                result = callable_()
            except Exception as exc:
                handler(None, exc)
            else:
                handler(result, None)

    def paths(self) -> list[str]:
        return [Path(split.path).name for _, split in self.assigned]


def text_source(path: Path, interval: Any = None) -> FileSource[str]:
    builder = FileSource.for_record_stream_format(StreamFormat.text_line_format(), str(path))
    if interval is not None:
        builder.monitor_continuously(interval)
    return builder.build()


def request_until_done(enumerator: Any, ctx: RecordingContext, subtasks: list[int]) -> None:
    """Readers ask in turn, one request per split received, until each heard "no more splits"."""
    for _ in range(100):
        for s in subtasks:
            if s not in ctx.no_more:
                enumerator.handle_split_request(s, "localhost")
        if ctx.no_more >= set(subtasks):
            return
    raise AssertionError("the enumerator never said no more splits")


def test_static_enumerator_assigns_every_file_once_then_no_more(tmp_path: Path) -> None:
    for i in range(5):
        (tmp_path / f"f{i}.txt").write_text("x\n")
    ctx = RecordingContext(parallelism=2)
    enumerator = text_source(tmp_path).create_enumerator(ctx)
    assert isinstance(enumerator, StaticFileSplitEnumerator)
    enumerator.start()
    enumerator.handle_split_request(0, "localhost")  # before the listing finished: waits
    assert ctx.assigned == [] and ctx.no_more == set()
    ctx.run_async()
    assert ctx.paths() == ["f0.txt"]
    request_until_done(enumerator, ctx, [0, 1])
    assert sorted(ctx.paths()) == [f"f{i}.txt" for i in range(5)]
    assert {s for s, _ in ctx.assigned} == {0, 1}


def test_static_enumerator_hands_out_row_groups(tmp_path: Path) -> None:
    pq.write_table(pa.table({"id": list(range(30))}), tmp_path / "a.parquet", row_group_size=10)
    ctx = RecordingContext(parallelism=3)
    enumerator = FileSource.for_bulk_file_format(ParquetColumnarRowInputFormat(), str(tmp_path)).build()
    e = enumerator.create_enumerator(ctx)
    e.start()
    ctx.run_async()
    request_until_done(e, ctx, [0, 1, 2])
    assert sorted(split.row_group for _, split in ctx.assigned) == [0, 1, 2]  # type: ignore[type-var]


def test_add_splits_back_reassigns_and_snapshot_keeps_pending(tmp_path: Path) -> None:
    for i in range(3):
        (tmp_path / f"f{i}.txt").write_text("x\n")
    ctx = RecordingContext(parallelism=2)
    enumerator = text_source(tmp_path).create_enumerator(ctx)
    enumerator.start()
    ctx.run_async()
    enumerator.handle_split_request(0, "h")
    ((_, given),) = ctx.assigned
    enumerator.add_splits_back([given], 0)  # subtask 0 failed before a checkpoint
    state = pickle.loads(pickle.dumps(enumerator.snapshot_state(1)))
    assert [Path(s.path).name for s in state.splits] == ["f0.txt", "f1.txt", "f2.txt"]
    restored_ctx = RecordingContext(parallelism=1)
    restored = text_source(tmp_path).restore_enumerator(restored_ctx, state)
    restored.start()
    assert restored_ctx.calls == []  # already listed: not listed again
    request_until_done(restored, restored_ctx, [0])
    assert restored_ctx.paths() == ["f0.txt", "f1.txt", "f2.txt"]


def test_waiting_reader_that_failed_is_not_assigned(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    ctx = RecordingContext(parallelism=2)
    enumerator = text_source(tmp_path).create_enumerator(ctx)
    enumerator.start()
    enumerator.handle_split_request(1, "h")
    del ctx.readers[1]  # its subtask failed before the listing landed
    enumerator.handle_split_request(0, "h")
    ctx.run_async()
    assert [(s, Path(split.path).name) for s, split in ctx.assigned] == [(0, "a.txt")]


def test_continuous_enumerator_picks_up_new_files_each_once(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    ctx = RecordingContext(parallelism=2)
    source = text_source(tmp_path, timedelta(seconds=5))
    assert source.get_boundedness() == "CONTINUOUS_UNBOUNDED"
    enumerator = source.create_enumerator(ctx)
    assert isinstance(enumerator, ContinuousFileSplitEnumerator)
    enumerator.start()
    assert ctx.calls[0][2] == 5000
    enumerator.handle_split_request(0, "h")
    enumerator.handle_split_request(1, "h")
    ctx.run_async()
    assert ctx.paths() == ["a.txt"]
    (tmp_path / "b.txt").write_text("y\n")
    (tmp_path / ".b.txt.inprogress").write_text("partial\n")
    ctx.run_async()
    ctx.run_async()  # listed again: nothing new
    assert ctx.paths() == ["a.txt", "b.txt"]
    assert ctx.no_more == set()  # unbounded: never "no more splits"

    state = pickle.loads(pickle.dumps(enumerator.snapshot_state(7)))
    assert state.already_processed_paths == {str(tmp_path / "a.txt"), str(tmp_path / "b.txt")}
    (tmp_path / "c.txt").write_text("z\n")  # written while the job was down
    restored_ctx = RecordingContext(parallelism=1)
    restored = source.restore_enumerator(restored_ctx, state)
    restored.start()
    restored.handle_split_request(0, "h")
    restored_ctx.run_async()
    restored.handle_split_request(0, "h")
    restored_ctx.run_async()
    assert restored_ctx.paths() == ["c.txt"]


def test_continuous_enumerator_survives_a_failed_listing(tmp_path: Path) -> None:
    watched = tmp_path / "in"
    watched.mkdir()
    ctx = RecordingContext(parallelism=1)
    enumerator = text_source(watched, "1 s").create_enumerator(ctx)
    enumerator.start()
    enumerator.handle_split_request(0, "h")
    watched.rmdir()
    ctx.run_async()  # the listing fails: logged, tried again
    watched.mkdir()
    (watched / "a.txt").write_text("x\n")
    ctx.run_async()
    assert ctx.paths() == ["a.txt"]


def test_reader_pulls_splits_and_ends_after_no_more_splits(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("1\n2\n")
    (tmp_path / "b.txt").write_text("3\n")
    source = text_source(tmp_path)
    ctx = RecordingContext(parallelism=1)
    enumerator = source.create_enumerator(ctx)
    enumerator.start()
    ctx.run_async()
    requests: list[int] = []
    reader = source.create_reader(
        SourceReaderContext(
            subtask_index=0, parallelism=1, batch_size=10, split_request_sender=lambda: requests.append(0)
        )
    )
    reader.start()
    out: list[str] = []
    for _ in range(20):  # deliver what the enumerator answered between polls, as the SourceOperator does
        for _ in requests:
            enumerator.handle_split_request(0, "h")
        requests.clear()
        for _, split in ctx.assigned:
            reader.add_splits([split])
        ctx.assigned.clear()
        if 0 in ctx.no_more:
            reader.notify_no_more_splits()
        batch = reader.poll_batch()
        if batch is None:
            break
        out.extend(batch)
    assert out == ["1", "2", "3"]


def test_validate_missing_path(tmp_path: Path) -> None:
    with pytest.raises(ConnectorError, match=r"source path .*nope.* to exist"):
        text_source(tmp_path / "nope").validate()
    text_source(tmp_path).validate()


def test_validate_memory_filesystem_is_refused() -> None:
    with pytest.raises(ConnectorError, match=r"memory:// is private to each process.*hint"):
        FileSource.for_record_stream_format(StreamFormat.text_line_format(), "memory://data").build().validate()


def test_validate_scheme_without_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gcsfs", None)
    with pytest.raises(ConnectorError, match=r"gs://bucket/x.*hint: pip install"):
        FileSource.for_record_stream_format(StreamFormat.text_line_format(), "gs://bucket/x").build().validate()
    with pytest.raises(ConnectorError, match=r"scheme fsspec knows"):
        FileSource.for_record_stream_format(StreamFormat.text_line_format(), "nosuch://x").build().validate()


def test_execute_validates_before_starting_a_cluster(tmp_path: Path) -> None:
    from strom.api.environment import StreamExecutionEnvironment

    env = StreamExecutionEnvironment.get_execution_environment()
    env.read_text_file(str(tmp_path / "missing.txt")).print()
    with pytest.raises(ConnectorError, match=r"missing\.txt"):
        env.execute()


def test_builder_errors(tmp_path: Path) -> None:
    fmt = StreamFormat.text_line_format()
    with pytest.raises(InvalidProgramError, match="at least one path"):
        FileSource.for_record_stream_format(fmt)
    with pytest.raises(InvalidProgramError, match="StreamFormat"):
        FileSource.for_record_stream_format(ParquetColumnarRowInputFormat(), "x")  # type: ignore[arg-type]
    with pytest.raises(InvalidProgramError, match="positive interval"):
        FileSource.for_record_stream_format(fmt, "x").monitor_continuously(0)
    with pytest.raises(InvalidProgramError, match="interval"):
        FileSource.for_record_stream_format(fmt, "x").monitor_continuously(1.5)  # type: ignore[arg-type]
    assert FileSource.for_record_stream_format(fmt, "x").monitor_continuously(
        "2 min"
    ).build().discovery_interval_ms == (120_000)
    built = FileSource.for_record_stream_format(fmt, "x").monitor_continuously(10).process_static_file_set().build()
    assert built.get_boundedness() == "BOUNDED"


def test_a_parquet_file_still_being_written_does_not_hold_back_the_others(tmp_path: Path) -> None:
    """A monitored directory: a file without a footer yet is skipped (with a warning) and read once it is whole;
    the other files are assigned meanwhile. A static source fails on it instead."""
    pq.write_table(pa.table({"id": [1, 2]}), tmp_path / "a.parquet")
    (tmp_path / "b.parquet").write_bytes(b"PAR1 half written")
    ctx = RecordingContext(parallelism=1)
    source = FileSource.for_bulk_file_format(ParquetColumnarRowInputFormat(), str(tmp_path))
    enumerator = source.monitor_continuously("1 s").build().create_enumerator(ctx)
    enumerator.start()
    enumerator.handle_split_request(0, "h")
    ctx.run_async()
    assert ctx.paths() == ["a.parquet"]
    pq.write_table(pa.table({"id": [3]}), tmp_path / "b.parquet")  # now whole
    enumerator.handle_split_request(0, "h")
    ctx.run_async()
    assert ctx.paths() == ["a.parquet", "b.parquet"]

    static_ctx = RecordingContext(parallelism=1)
    (tmp_path / "c.parquet").write_bytes(b"PAR1 half written")
    static = FileSource.for_bulk_file_format(ParquetColumnarRowInputFormat(), str(tmp_path)).build()
    e = static.create_enumerator(static_ctx)
    e.start()
    with pytest.raises(ConnectorError, match=r"expected a Parquet file at .*c\.parquet"):
        static_ctx.run_async()
