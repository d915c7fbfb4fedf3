"""FileSink and the Sink V2 two-phase commit of ``SinkWriterOperator``, driven by hand (no cluster)."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from strom.api.sink import (
    CommitRequest,
    Committer,
    PrecommittingSinkWriter,
    SinkWriterContext,
    TwoPhaseCommittingSink,
)
from strom.connectors import (
    BucketAssigner,
    CsvEncoder,
    DefaultRollingPolicy,
    FileSink,
    JsonLinesEncoder,
    OnCheckpointRollingPolicy,
    OutputFileConfig,
    SimpleStringEncoder,
)
from strom.connectors.file_system import FileCommittable, FileCommitter, FileWriter
from strom.exceptions import ConnectorError, InvalidProgramError, SerializationError, StromError, UserFunctionError
from strom.runtime.checkpoint.snapshot import OperatorRestoreState, OperatorSnapshot
from strom.runtime.checkpoint.temporary_dir import create_temporary_checkpoint_dir
from strom.runtime.network.events import CheckpointOptions
from strom.runtime.operators.base import StreamingRuntimeContext, TaskInfo
from strom.runtime.operators.sink import SinkWriterOperator

pytestmark = pytest.mark.timeout(30)

UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"  # Flink's part names carry UUID.toString()
FINAL_NAME = re.compile(rf"^part-{UUID}-\d+$")


class _Discard:
    def emit(self, batch: list[Any]) -> None:
        raise AssertionError("a sink emits nothing")


class _ManualClock:
    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now


def _operator(
    sink: Any,
    *,
    subtask: int = 0,
    parallelism: int = 1,
    attempt: int = 0,
    checkpointing: bool = True,
    temporary_dir: str = "",
) -> SinkWriterOperator:
    op = SinkWriterOperator(sink)
    op.checkpointing_enabled = checkpointing
    op.temporary_checkpoint_dir = temporary_dir  # "": the user configured the checkpoint storage
    info = TaskInfo(
        job_id="job-1",
        job_name="files",
        task_name="Sink: Writer",
        subtask_index=subtask,
        parallelism=parallelism,
        max_parallelism=128,
        attempt_number=attempt,
    )
    op.setup(StreamingRuntimeContext(info, operator_name=op.name), _Discard())
    return op


def _start(op: SinkWriterOperator, restore: OperatorRestoreState | None = None) -> SinkWriterOperator:
    op.initialize_state(restore)
    op.open()
    return op


def _crash(op: SinkWriterOperator) -> None:
    """The process dies: the OS closes the open part file; nothing of the operator runs any more."""
    writer = op._writer
    if isinstance(writer, FileWriter):
        for part in writer._parts.values():
            part.stream.close()


def _snapshot(op: SinkWriterOperator, checkpoint_id: int) -> OperatorSnapshot:
    snap = op.snapshot_state(checkpoint_id, 1_000 * checkpoint_id)
    assert snap is not None and snap.operator is not None
    return snap


def _restore(checkpoint_id: int, *snaps: OperatorSnapshot) -> OperatorRestoreState:
    blobs = tuple(s.operator for s in snaps if s.operator is not None)
    return OperatorRestoreState(checkpoint_id=checkpoint_id, operator=blobs, old_parallelism=len(snaps))


IN_BASE_PATH = BucketAssigner.base_path_bucket_assigner()


def _visible(d: Path) -> list[str]:
    return sorted(n for n in os.listdir(d) if not n.startswith("."))


def _hidden(d: Path) -> list[str]:
    return sorted(n for n in os.listdir(d) if n.startswith("."))


def _lines(d: Path) -> list[str]:
    """Every committed line, sorted (the order across part files is not defined)."""
    out: list[str] = []
    for name in _visible(d):
        out.extend((d / name).read_text("utf-8").splitlines())
    return sorted(out)


# The commit protocol in the base path itself, parts rolling at every checkpoint; the default (date-time) buckets:
# test_file_sink_policies.py; in-progress parts across checkpoints: test_file_sink_resume.py
ON_CHECKPOINT = OnCheckpointRollingPolicy()


def _json_sink(d: Path) -> FileSink:
    return (
        FileSink.for_row_format(str(d), JsonLinesEncoder())
        .with_bucket_assigner(IN_BASE_PATH)
        .with_rolling_policy(ON_CHECKPOINT)
        .build()
    )


def _string_sink(d: Path) -> FileSink:
    return (
        FileSink.for_row_format(str(d), SimpleStringEncoder())
        .with_bucket_assigner(IN_BASE_PATH)
        .with_rolling_policy(ON_CHECKPOINT)
        .build()
    )


# -- two-phase commit through the operator -------------------------------------------------------------------
def test_nothing_is_visible_until_the_checkpoint_completes(tmp_path: Path) -> None:
    op = _start(_operator(_json_sink(tmp_path)))
    op.process_batch([{"a": 1}, {"b": [1, 2]}])
    _snapshot(op, 1)
    assert _visible(tmp_path) == []
    assert len(_hidden(tmp_path)) == 1 and _hidden(tmp_path)[0].endswith(".inprogress")

    op.notify_checkpoint_complete(1)
    [name] = _visible(tmp_path)
    assert FINAL_NAME.match(name)
    assert (tmp_path / name).read_bytes() == b'{"a":1}\n{"b":[1,2]}\n'
    assert _hidden(tmp_path) == []
    op.finish()
    op.close()


def test_a_checkpoint_without_records_creates_no_file(tmp_path: Path) -> None:
    op = _start(_operator(_string_sink(tmp_path)))
    _snapshot(op, 1)
    op.notify_checkpoint_complete(1)
    op.process_batch([])
    _snapshot(op, 2)
    op.notify_checkpoint_complete(2)
    assert os.listdir(tmp_path) == []
    op.finish()
    op.close()
    assert os.listdir(tmp_path) == []


def test_restore_commits_the_checkpoint_and_drops_what_came_after(tmp_path: Path) -> None:
    op = _start(_operator(_string_sink(tmp_path)))
    op.process_batch(["a1", "a2"])
    _snapshot(op, 1)
    op.notify_checkpoint_complete(1)
    op.process_batch(["b1"])
    snap2 = _snapshot(op, 2)  # complete on the JobMaster, but the notification never arrives
    op.process_batch(["c1"])
    _snapshot(op, 3)  # pending for checkpoint 3, which never completes
    op.process_batch(["c2"])  # in progress
    _crash(op)
    assert _lines(tmp_path) == ["a1", "a2"]

    op2 = _start(_operator(_string_sink(tmp_path), attempt=1), _restore(2, snap2))
    assert _lines(tmp_path) == ["a1", "a2", "b1"]
    assert _hidden(tmp_path) == []  # the dead parts of the old writer are deleted

    op2.process_batch(["c1", "c2"])  # the source replays what came after checkpoint 2
    _snapshot(op2, 3)
    op2.notify_checkpoint_complete(3)
    op2.finish()
    op2.close()
    assert _lines(tmp_path) == ["a1", "a2", "b1", "c1", "c2"]
    assert _hidden(tmp_path) == []


def test_restoring_a_checkpoint_twice_commits_once(tmp_path: Path) -> None:
    op = _start(_operator(_string_sink(tmp_path)))
    op.process_batch(["x"])
    snap = _snapshot(op, 1)
    op.notify_checkpoint_complete(1)
    _crash(op)
    for attempt in (1, 2):  # committed already, then again after a second failure
        restored = _start(_operator(_string_sink(tmp_path), attempt=attempt), _restore(1, snap))
        _crash(restored)
    assert _lines(tmp_path) == ["x"]


def test_an_aborted_checkpoint_stays_pending_until_the_next_completes(tmp_path: Path) -> None:
    op = _start(_operator(_string_sink(tmp_path)))
    op.process_batch(["a"])
    _snapshot(op, 1)
    op.notify_checkpoint_aborted(1)
    assert _visible(tmp_path) == []
    op.process_batch(["b"])
    _snapshot(op, 2)
    op.notify_checkpoint_complete(2)
    assert len(_visible(tmp_path)) == 2
    assert _lines(tmp_path) == ["a", "b"]
    op.close()


def test_a_restored_checkpoint_carries_the_committables_of_an_aborted_one(tmp_path: Path) -> None:
    op = _start(_operator(_string_sink(tmp_path)))
    op.process_batch(["a"])
    _snapshot(op, 1)
    op.notify_checkpoint_aborted(1)
    op.process_batch(["b"])
    snap2 = _snapshot(op, 2)
    _crash(op)
    _start(_operator(_string_sink(tmp_path), attempt=1), _restore(2, snap2))
    assert _lines(tmp_path) == ["a", "b"]
    assert _hidden(tmp_path) == []


def test_end_of_input_without_checkpointing_commits_at_finish(tmp_path: Path) -> None:
    op = _start(_operator(_string_sink(tmp_path), checkpointing=False))
    op.process_batch(["1", "2"])
    op.process_batch(["3"])
    op.finish()
    assert _lines(tmp_path) == ["1", "2", "3"]
    op.close()
    assert _hidden(tmp_path) == []


def test_end_of_input_with_checkpointing_commits_with_the_final_checkpoint(tmp_path: Path) -> None:
    op = _start(_operator(_string_sink(tmp_path), checkpointing=True))
    op.process_batch(["1"])
    _snapshot(op, 1)
    op.process_batch(["2"])
    op.finish()
    assert _visible(tmp_path) == []
    _snapshot(op, 2)  # the final checkpoint after end of input (FLIP-147)
    op.notify_checkpoint_complete(2)
    op.close()
    assert _lines(tmp_path) == ["1", "2"]
    assert _hidden(tmp_path) == []


def test_close_after_a_failure_removes_only_uncheckpointed_parts(tmp_path: Path) -> None:
    op = _start(_operator(_string_sink(tmp_path)))
    op.process_batch(["a"])
    _snapshot(op, 1)  # pending: must survive close()
    op.process_batch(["b"])  # in progress: deleted by close()
    op.close()
    assert _visible(tmp_path) == [] and len(_hidden(tmp_path)) == 1


@pytest.mark.parametrize("new_parallelism", [1, 3])
def test_rescaling_commits_every_pending_part_exactly_once(tmp_path: Path, new_parallelism: int) -> None:
    snaps = []
    for i in range(2):
        op = _start(_operator(_string_sink(tmp_path), subtask=i, parallelism=2))
        op.process_batch([f"{i}-a", f"{i}-b"])
        _snapshot(op, 1)
        op.notify_checkpoint_aborted(1)
        op.process_batch([f"{i}-c"])
        snaps.append(_snapshot(op, 2))
        op.process_batch([f"{i}-lost"])
        _crash(op)
    restore = _restore(2, *snaps)
    ops = [
        _start(_operator(_string_sink(tmp_path), subtask=i, parallelism=new_parallelism, attempt=1), restore)
        for i in range(new_parallelism)
    ]
    assert _lines(tmp_path) == ["0-a", "0-b", "0-c", "1-a", "1-b", "1-c"]
    assert _hidden(tmp_path) == []
    for i, op in enumerate(ops):
        op.process_batch([f"new-{i}"])
        _snapshot(op, 3)
        op.notify_checkpoint_complete(3)
        op.close()
    assert _lines(tmp_path) == sorted(
        ["0-a", "0-b", "0-c", "1-a", "1-b", "1-c"] + [f"new-{i}" for i in range(new_parallelism)]
    )


def test_an_encoder_error_names_the_record(tmp_path: Path) -> None:
    op = _start(_operator(_json_sink(tmp_path)))
    with pytest.raises(UserFunctionError) as info:
        op.process_batch([{"ok": 1}, {1, 2}])
    msg = str(info.value)
    assert "JsonLinesEncoder expected a JSON-serializable record" in msg and "'set'" in msg and "hint" in msg
    op.close()
    assert os.listdir(tmp_path) == []


def test_a_missing_part_fails_the_commit(tmp_path: Path) -> None:
    op = _start(_operator(_string_sink(tmp_path)))
    op.process_batch(["a"])
    _snapshot(op, 1)
    [hidden] = _hidden(tmp_path)
    os.unlink(tmp_path / hidden)
    with pytest.raises(UserFunctionError, match="the records of this part are lost"):
        op.notify_checkpoint_complete(1)
    op.close()


# -- parts that only the client's temporary checkpoints could restore ------------------------------------------
@pytest.fixture
def client_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A client's temporary checkpoint directory and a function that lets go of it, as the client's death does
    (the kernel releases the owner lock of a dead process the same way)."""
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    path, lock = create_temporary_checkpoint_dir()
    held = [lock]

    def die() -> None:
        os.close(held.pop())

    yield path, die
    if held:
        die()


def _committed_files(d: Path) -> dict[str, bytes]:
    return {n: (d / n).read_bytes() for n in _visible(d)}


def test_the_uncommitted_parts_of_a_dead_client_go_with_the_next_writer(tmp_path: Path, client_dir: Any) -> None:
    checkpoints, die = client_dir
    out = tmp_path / "out"
    op = _start(_operator(_string_sink(out), temporary_dir=checkpoints))
    op.process_batch(["a"])
    _snapshot(op, 1)
    op.notify_checkpoint_complete(1)
    op.process_batch(["b"])
    _snapshot(op, 2)  # pending: the notification never arrives
    op.process_batch(["c"])  # in progress
    _crash(op)
    configured = _start(_operator(_string_sink(out), subtask=1, parallelism=2))  # execution.checkpointing.dir set
    configured.process_batch(["d"])
    _snapshot(configured, 7)
    configured.process_batch(["e"])
    _crash(configured)
    configured_id = configured._writer.writer_id  # type: ignore[union-attr]
    assert _lines(out) == ["a"]
    elsewhere = "f" * 32  # a writer on another machine sharing the directory: its client is not ours to judge
    owner = {"checkpoints": checkpoints, "host": "another-host", "parts": f".part-{elsewhere}-"}
    (out / f".strom-owner-{elsewhere}").write_text(json.dumps(owner))
    (out / f".part-{elsewhere}-0.inprogress").write_text("x\n")
    (out / ".notes").write_text("not strom's")
    (out / "data.txt").write_text("not strom's either")
    committed = _committed_files(out)
    uncommitted = [n for n in _hidden(out) if n.endswith(".inprogress")]
    assert len(uncommitted) == 5

    _start(_operator(_string_sink(out), attempt=1)).close()  # the client lives: its job may still restore them
    assert [n for n in _hidden(out) if n.endswith(".inprogress")] == uncommitted

    die()
    _start(_operator(_string_sink(out), attempt=1)).close()  # any writer into the directory
    assert _committed_files(out) == committed
    kept = [n for n in uncommitted if configured_id in n or elsewhere in n]
    assert _hidden(out) == sorted([".notes", f".strom-owner-{elsewhere}", *kept])


def test_a_failover_while_the_client_lives_commits_the_pending_parts_exactly_once(
    tmp_path: Path, client_dir: Any
) -> None:
    checkpoints, _ = client_dir
    out = tmp_path / "out"
    snaps = []
    for i in range(2):
        op = _start(_operator(_string_sink(out), subtask=i, parallelism=2, temporary_dir=checkpoints))
        op.process_batch([f"{i}-a"])
        snaps.append(_snapshot(op, 1))  # complete, not notified
        op.process_batch([f"{i}-lost"])
        _crash(op)
    restore = _restore(1, *snaps)
    ops = [
        _start(_operator(_string_sink(out), subtask=i, parallelism=2, attempt=1, temporary_dir=checkpoints), restore)
        for i in range(2)
    ]
    for i, op in enumerate(ops):
        op.process_batch([f"{i}-lost"])  # replayed
        _snapshot(op, 2)
        op.notify_checkpoint_complete(2)
        op.finish()
        op.close()
    assert _lines(out) == ["0-a", "0-lost", "1-a", "1-lost"]
    assert [n for n in _hidden(out) if n.endswith(".inprogress")] == []


def test_a_savepoint_keeps_its_parts_when_the_client_dies(tmp_path: Path, client_dir: Any) -> None:
    checkpoints, die = client_dir
    out = tmp_path / "out"
    op = _start(_operator(_string_sink(out), temporary_dir=checkpoints))
    op.process_batch(["a"])
    op.prepare_snapshot_pre_barrier(1, CheckpointOptions(is_savepoint=True))
    savepoint = _snapshot(op, 1)  # complete, but the client dies before its notification commits "a"
    op.process_batch(["b"])
    op.prepare_snapshot_pre_barrier(2, CheckpointOptions())
    _snapshot(op, 2)
    op.process_batch(["c"])
    _crash(op)
    assert len([n for n in _hidden(out) if n.endswith(".inprogress")]) == 3  # a (the savepoint's), b, c
    die()
    shutil.rmtree(checkpoints)  # as the next cluster start does

    _start(_operator(_string_sink(out), attempt=1)).close()  # a later run writing into the directory
    [kept] = _hidden(out)
    assert kept.endswith(".inprogress")

    restored = _start(_operator(_string_sink(out)), _restore(1, savepoint))
    restored.process_batch(["b", "c"])
    _snapshot(restored, 2)
    restored.notify_checkpoint_complete(2)
    restored.finish()
    restored.close()
    assert _lines(out) == ["a", "b", "c"]
    assert _hidden(out) == []


def test_a_finished_job_leaves_no_owner_marker(tmp_path: Path, client_dir: Any) -> None:
    checkpoints, _ = client_dir
    out = tmp_path / "out"
    op = _start(_operator(_string_sink(out), temporary_dir=checkpoints))
    op.process_batch(["1"])
    _snapshot(op, 1)
    op.process_batch(["2"])
    op.finish()
    _snapshot(op, 2)  # the final checkpoint
    op.notify_checkpoint_complete(2)
    op.close()
    assert _lines(out) == ["1", "2"]
    assert _hidden(out) == []


# -- the committer ---------------------------------------------------------------------------------------------
def test_commit_is_idempotent(tmp_path: Path) -> None:
    pending, final = tmp_path / ".part-x-0.inprogress", tmp_path / "part-x-0"
    pending.write_bytes(b"data\n")
    c = FileCommittable(pending_path=str(pending), final_path=str(final))
    committer = FileCommitter()
    committer.commit([CommitRequest(c)])
    committer.commit([CommitRequest(c)])  # again, after a restore: nothing happens
    assert final.read_bytes() == b"data\n" and not pending.exists()
    os.unlink(final)
    with pytest.raises(StromError, match="expected it or its pending file"):
        committer.commit([CommitRequest(c)])


class _ListCommitter(Committer[str]):
    def __init__(self, log: list[str], retry: set[str]) -> None:
        self.log, self.retry = log, retry

    def commit(self, requests: list[CommitRequest[str]]) -> None:
        for r in requests:
            if r.committable in self.retry and r.number_of_retries == 0:
                r.retry_later()
            else:
                self.log.append(r.committable)


class _ListWriter(PrecommittingSinkWriter[str, str]):
    def __init__(self) -> None:
        self.buffer: list[str] = []

    def write(self, element: str) -> None:
        self.buffer.append(element)

    def prepare_commit(self) -> list[str]:
        out, self.buffer = self.buffer, []
        return out


class _ListSink(TwoPhaseCommittingSink[str, str]):
    def __init__(self, retry: frozenset[str] = frozenset()) -> None:
        self.log: list[str] = []
        self.retry = set(retry)

    def create_writer(self, context: SinkWriterContext) -> _ListWriter:
        return _ListWriter()

    def create_committer(self) -> _ListCommitter:
        return _ListCommitter(self.log, self.retry)


def test_commits_run_in_checkpoint_order_and_retry_later_waits_for_the_next() -> None:
    sink = _ListSink(retry=frozenset({"b"}))
    op = _start(_operator(sink))
    op.process_batch(["a"])
    _snapshot(op, 1)
    op.process_batch(["b", "c"])
    _snapshot(op, 2)
    op.process_batch(["d"])
    _snapshot(op, 3)
    op.notify_checkpoint_complete(2)  # 1 and 2, in order; "b" asks to be retried
    assert sink.log == ["a", "c"]
    op.notify_checkpoint_complete(3)
    assert sink.log == ["a", "c", "b", "d"]
    op.close()


# -- encoders --------------------------------------------------------------------------------------------------
def test_json_lines_encoding_is_exact() -> None:
    enc = JsonLinesEncoder()
    records = [{"k": "v", "n": [1, 2.5, None, True]}, "ü", 3, [{"z": 1, "a": 2}]]
    assert enc.encode_batch(records) == b'{"k":"v","n":[1,2.5,null,true]}\n"\\u00fc"\n3\n[{"z":1,"a":2}]\n'
    assert enc.encode({"a": 1}) == b'{"a":1}\n'
    assert enc.encode_batch([]) == b""
    with pytest.raises(SerializationError, match=r"got a 'object'.*hint: map records to dicts"):
        enc.encode_batch([1, object()])


def test_csv_encoding_is_exact() -> None:
    enc = CsvEncoder()
    out = enc.encode_batch([(1, "a,b", 'say "hi"'), ["x", None, 2.5], "scalar", 7])
    assert out == b'1,"a,b","say ""hi"""\nx,,2.5\nscalar\n7\n'
    assert CsvEncoder(delimiter=";").encode((1, "a;b")) == b'1;"a;b"\n'
    with pytest.raises(SerializationError, match="got a 'dict'"):
        enc.encode({"a": 1})
    with pytest.raises(InvalidProgramError, match="one-character delimiter"):
        CsvEncoder(delimiter="::")


def test_simple_string_encoding() -> None:
    enc = SimpleStringEncoder()
    assert enc.encode_batch([1, "a", (1, 2)]) == b"1\na\n(1, 2)\n"
    assert enc.encode("é") == "é\n".encode()


# -- files: names, rolling, builder ----------------------------------------------------------------------------
def test_output_file_config_names_the_parts(tmp_path: Path) -> None:
    sink = (
        FileSink.for_row_format(f"file://{tmp_path}/out", JsonLinesEncoder())
        .with_output_file_config(OutputFileConfig(part_prefix="events", part_suffix=".jsonl"))
        .build()
    )
    op = _start(_operator(sink, checkpointing=False))
    op.process_batch([1])
    op.finish()
    op.close()
    [bucket] = os.listdir(tmp_path / "out")  # the default bucket: Flink's DateTimeBucketAssigner
    assert re.match(r"^\d{4}-\d{2}-\d{2}--\d{2}$", bucket)
    [name] = os.listdir(tmp_path / "out" / bucket)
    assert re.match(rf"^events-{UUID}-0\.jsonl$", name)


def test_parts_roll_on_size_at_record_boundaries(tmp_path: Path) -> None:
    sink = (
        FileSink.for_row_format(str(tmp_path), SimpleStringEncoder())
        .with_bucket_assigner(IN_BASE_PATH)
        .with_rolling_policy(DefaultRollingPolicy(max_part_size_bytes=10))
        .build()
    )
    op = _start(_operator(sink))
    records = [f"r{i:02d}" for i in range(10)]  # 4 bytes per row: 2 rows per part
    op.process_batch(records[:3])
    op.process_batch(records[3:])
    _snapshot(op, 1)
    op.notify_checkpoint_complete(1)
    assert len(_visible(tmp_path)) == 4 and len(_hidden(tmp_path)) == 1  # the last part stays open
    op.finish()
    _snapshot(op, 2)
    op.notify_checkpoint_complete(2)
    sizes = [os.path.getsize(tmp_path / n) for n in _visible(tmp_path)]
    assert len(sizes) == 5 and all(s == 8 for s in sizes)
    assert _lines(tmp_path) == records
    op.close()


def test_parts_roll_on_age(tmp_path: Path) -> None:
    clock = _ManualClock()
    sink = (
        FileSink.for_row_format(str(tmp_path), SimpleStringEncoder())
        .with_bucket_assigner(IN_BASE_PATH)
        .with_rolling_policy(DefaultRollingPolicy(rollover_interval_ms=1_000))
        .with_clock(clock)
        .build()
    )
    op = _start(_operator(sink))
    op.process_batch(["a"])
    clock.now = 0.5
    op.process_batch(["b"])
    clock.now = 1.0
    op.process_batch(["c"])  # the first part is 1 s old: it rolls before "c"
    assert len(_hidden(tmp_path)) == 2
    op.finish()
    _snapshot(op, 1)
    op.notify_checkpoint_complete(1)
    contents = sorted((tmp_path / n).read_text() for n in _visible(tmp_path))
    assert contents == ["a\nb\n", "c\n"]
    op.close()


def test_builder_rejects_misuse(tmp_path: Path) -> None:
    with pytest.raises(ConnectorError, match="URL scheme fsspec knows"):  # at execute(), before any cluster
        FileSink.for_row_format("nosuchscheme://bucket/out", JsonLinesEncoder()).build().validate()
    with pytest.raises(InvalidProgramError, match="expects an Encoder"):
        FileSink.for_row_format(str(tmp_path), "json")  # type: ignore[arg-type]
    with pytest.raises(InvalidProgramError, match="positive int"):
        DefaultRollingPolicy(max_part_size_bytes=0)
    with pytest.raises(InvalidProgramError, match="without path separators"):
        OutputFileConfig(part_prefix="a/b")
    builder = FileSink.for_row_format(str(tmp_path), JsonLinesEncoder())
    assert builder.with_rolling_policy(DefaultRollingPolicy()) is not builder  # builders are immutable
    assert FileSink.for_row_format("rel/dir", JsonLinesEncoder()).build().base_path == os.path.abspath("rel/dir")
