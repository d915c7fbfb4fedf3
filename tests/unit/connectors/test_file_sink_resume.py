"""Row-format FileSink parts kept open across checkpoints (``DefaultRollingPolicy`` on a local filesystem): recorded
in the writer state, truncated and resumed after a restore, redistributed by a rescale, rolled by savepoints —
driven by hand through the SinkWriterOperator (no cluster)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from strom.connectors.file_system import (
    BucketAssigner,
    DefaultRollingPolicy,
    FileSink,
    FileWriter,
    RollingPolicy,
    SimpleStringEncoder,
)
from strom.exceptions import UserFunctionError
from strom.runtime.checkpoint.snapshot import OperatorRestoreState, OperatorSnapshot
from strom.runtime.checkpoint.temporary_dir import create_temporary_checkpoint_dir
from strom.runtime.network.events import CheckpointOptions
from strom.runtime.operators.base import StreamingRuntimeContext, TaskInfo
from strom.runtime.operators.sink import SinkWriterOperator

pytestmark = pytest.mark.timeout(30)


class _Discard:
    def emit(self, batch: list[Any]) -> None:
        raise AssertionError("a sink emits nothing")


def _sink(d: Path, policy: RollingPolicy | None = None) -> FileSink:
    return (
        FileSink.for_row_format(str(d), SimpleStringEncoder())
        .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
        .with_rolling_policy(policy or DefaultRollingPolicy())
        .build()
    )


def _start(
    sink: FileSink,
    restore: OperatorRestoreState | None = None,
    *,
    subtask: int = 0,
    parallelism: int = 1,
    attempt: int = 0,
    temporary_dir: str = "",
) -> SinkWriterOperator:
    op = SinkWriterOperator(sink)
    op.checkpointing_enabled = True
    op.temporary_checkpoint_dir = temporary_dir
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
    op.initialize_state(restore)
    op.open()
    return op


def _writer(op: SinkWriterOperator) -> FileWriter:
    writer = op._writer
    assert isinstance(writer, FileWriter)
    return writer


def _crash(op: SinkWriterOperator) -> None:
    """The process dies: the OS closes the open part files; nothing of the operator runs any more."""
    for part in _writer(op)._parts.values():
        part.stream.close()


def _snapshot(op: SinkWriterOperator, checkpoint_id: int, *, savepoint: bool = False) -> OperatorSnapshot:
    op.prepare_snapshot_pre_barrier(checkpoint_id, CheckpointOptions(is_savepoint=savepoint))
    snap = op.snapshot_state(checkpoint_id, 1_000 * checkpoint_id)
    assert snap is not None and snap.operator is not None
    return snap


def _checkpoint(op: SinkWriterOperator, checkpoint_id: int) -> OperatorSnapshot:
    snap = _snapshot(op, checkpoint_id)
    op.notify_checkpoint_complete(checkpoint_id)
    return snap


def _restore(checkpoint_id: int, *snaps: OperatorSnapshot) -> OperatorRestoreState:
    blobs = tuple(s.operator for s in snaps if s.operator is not None)
    return OperatorRestoreState(checkpoint_id=checkpoint_id, operator=blobs, old_parallelism=len(snaps))


def _end(op: SinkWriterOperator, checkpoint_id: int) -> None:
    """End of input, the final checkpoint, close."""
    op.finish()
    _checkpoint(op, checkpoint_id)
    op.close()


def _visible(d: Path) -> list[str]:
    return sorted(n for n in os.listdir(d) if not n.startswith("."))


def _in_progress(d: Path) -> list[str]:
    return sorted(n for n in os.listdir(d) if n.endswith(".inprogress"))


def _lines(d: Path) -> list[str]:
    out: list[str] = []
    for name in _visible(d):
        out.extend((d / name).read_text("utf-8").splitlines())
    return sorted(out)


def test_many_checkpoints_write_one_part_per_part_size(tmp_path: Path) -> None:
    op = _start(_sink(tmp_path, RollingPolicy.default_rolling_policy(part_size=100)))
    records = [f"r{i:03d}" for i in range(200)]  # 5 bytes each: 20 per part
    for i in range(0, 200, 2):  # a checkpoint every two records: 100 checkpoints
        op.process_batch(records[i : i + 2])
        _checkpoint(op, i // 2 + 1)
    assert len(_visible(tmp_path)) == 9 and len(_in_progress(tmp_path)) == 1  # the tenth is still open
    _end(op, 101)
    assert len(_visible(tmp_path)) == 10
    assert all(os.path.getsize(tmp_path / n) == 100 for n in _visible(tmp_path))
    assert _lines(tmp_path) == records


def test_a_restore_truncates_the_recorded_part_and_resumes_it(tmp_path: Path) -> None:
    op = _start(_sink(tmp_path))
    op.process_batch(["a1", "a2"])
    snap1 = _checkpoint(op, 1)
    [state] = _writer(op).snapshot_state(1)  # what the checkpoint recorded (persisting again changes nothing)
    [recorded] = state.in_progress
    assert (recorded.size, recorded.writer_id, recorded.bucket_id) == (6, state.writer_id, "")
    op.process_batch(["b1", "b2"])  # after the checkpoint: replayed by the source
    _writer(op)._parts[""].stream.flush()
    _crash(op)
    [part] = _in_progress(tmp_path)
    assert (tmp_path / part).read_text() == "a1\na2\nb1\nb2\n"

    restored = _start(_sink(tmp_path), _restore(1, snap1), attempt=1)
    assert _in_progress(tmp_path) == [part] and (tmp_path / part).read_text() == "a1\na2\n"  # truncated
    restored.process_batch(["b1", "b2"])
    _checkpoint(restored, 2)
    restored.process_batch(["c1"])
    _end(restored, 3)
    assert _visible(tmp_path) == [part[1 : -len(".inprogress")]]  # resumed under its name: one part
    assert (tmp_path / _visible(tmp_path)[0]).read_text() == "a1\na2\nb1\nb2\nc1\n"
    assert os.listdir(tmp_path) == _visible(tmp_path)


def test_restoring_a_checkpoint_twice_truncates_twice(tmp_path: Path) -> None:
    op = _start(_sink(tmp_path))
    op.process_batch(["a"])
    snap = _checkpoint(op, 1)
    op.process_batch(["lost-0"])
    _crash(op)
    for attempt in (1, 2):  # resumed, appended to, and lost again
        again = _start(_sink(tmp_path), _restore(1, snap), attempt=attempt)
        again.process_batch([f"lost-{attempt}"])
        _writer(again)._parts[""].stream.flush()
        _crash(again)
    final = _start(_sink(tmp_path), _restore(1, snap), attempt=3)
    final.process_batch(["b"])
    _end(final, 2)
    assert _lines(tmp_path) == ["a", "b"]
    assert len(_visible(tmp_path)) == 1 and _in_progress(tmp_path) == []


def test_close_after_a_failure_keeps_the_recorded_part_for_the_restore(tmp_path: Path) -> None:
    op = _start(_sink(tmp_path, RollingPolicy.default_rolling_policy(part_size=4)))
    op.process_batch(["a"])
    snap = _checkpoint(op, 1)  # "a\n" recorded in progress
    op.process_batch(["b"])  # the part rolls (recorded: its file stays), "b" opens a new one (dropped)
    op.close()  # the task fails and is cancelled
    assert len(_in_progress(tmp_path)) == 1
    restored = _start(_sink(tmp_path), _restore(1, snap), attempt=1)
    restored.process_batch(["b"])
    _end(restored, 2)
    assert _lines(tmp_path) == ["a", "b"]
    assert _in_progress(tmp_path) == []


def test_a_part_missing_at_restore_fails_naming_it(tmp_path: Path) -> None:
    op = _start(_sink(tmp_path))
    op.process_batch(["a"])
    snap = _checkpoint(op, 1)
    _crash(op)
    [part] = _in_progress(tmp_path)
    os.unlink(tmp_path / part)
    with pytest.raises(UserFunctionError) as info:
        _start(_sink(tmp_path), _restore(1, snap), attempt=1)
    assert part in str(info.value.__cause__) and "restore the job's latest checkpoint" in str(info.value.__cause__)


@pytest.mark.parametrize("new_parallelism", [1, 2, 3])
def test_rescaling_resumes_or_rolls_every_recorded_part_exactly_once(tmp_path: Path, new_parallelism: int) -> None:
    snaps = []
    for i in range(2):
        op = _start(_sink(tmp_path), subtask=i, parallelism=2)
        op.process_batch([f"{i}-a"])
        _checkpoint(op, 1)
        op.process_batch([f"{i}-b"])
        snaps.append(_snapshot(op, 2))  # complete, not notified: in progress across both checkpoints
        op.process_batch([f"{i}-lost"])
        _writer(op)._parts[""].stream.flush()
        _crash(op)
    assert len(_in_progress(tmp_path)) == 2
    restore = _restore(2, *snaps)
    ops = [
        _start(_sink(tmp_path), restore, subtask=i, parallelism=new_parallelism, attempt=1)
        for i in range(new_parallelism)
    ]
    open_parts = sum(len(_writer(op)._parts) for op in ops)
    assert open_parts == (1 if new_parallelism == 1 else 2)  # one subtask gets both: one resumed, one rolled
    for i, op in enumerate(ops):
        op.process_batch([f"new-{i}"])
        _checkpoint(op, 3)
    if new_parallelism == 1:  # the rolled one is committed; the resumed one is open
        assert _lines(tmp_path) in (["0-a", "0-b"], ["1-a", "1-b"])
    for op in ops:
        _end(op, 4)
    expected = ["0-a", "0-b", "1-a", "1-b"] + [f"new-{i}" for i in range(new_parallelism)]
    assert _lines(tmp_path) == sorted(expected)
    assert _in_progress(tmp_path) == []
    assert len(_visible(tmp_path)) == 2 + max(0, new_parallelism - 2)  # the new subtasks' own parts


def test_a_savepoint_rolls_the_open_part_and_records_none(tmp_path: Path) -> None:
    op = _start(_sink(tmp_path))
    op.process_batch(["a"])
    _checkpoint(op, 1)
    op.process_batch(["b"])
    savepoint = _snapshot(op, 2, savepoint=True)
    assert _writer(op)._parts == {}  # rolled into the savepoint: its state records no part in progress
    op.notify_checkpoint_complete(2)
    assert _lines(tmp_path) == ["a", "b"] and _in_progress(tmp_path) == []
    op.process_batch(["c"])
    _end(op, 3)
    for attempt in (1, 2):  # a savepoint restores any number of times
        restored = _start(_sink(tmp_path), _restore(2, savepoint), attempt=attempt)
        restored.process_batch(["c"])
        restored.close()
    assert _lines(tmp_path) == ["a", "b", "c"]


# -- jobs checkpointing into the client's temporary directory --------------------------------------------------
@pytest.fixture
def client_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    path, lock = create_temporary_checkpoint_dir()
    held = [lock]

    def die() -> None:
        os.close(held.pop())

    yield path, die
    if held:
        die()


def _markers(d: Path) -> list[str]:
    return sorted(n for n in os.listdir(d) if n.startswith(".strom-owner-"))


def test_a_resumed_part_keeps_its_owner_marker_until_committed(tmp_path: Path, client_dir: Any) -> None:
    checkpoints, _ = client_dir
    out = tmp_path / "out"
    op = _start(_sink(out), temporary_dir=checkpoints)
    op.process_batch(["a"])
    snap = _checkpoint(op, 1)
    first = _writer(op).writer_id
    _crash(op)
    restored = _start(_sink(out), _restore(1, snap), attempt=1, temporary_dir=checkpoints)
    assert _markers(out) == [f".strom-owner-{first}"]  # adopted: the resumed part is still uncommitted
    restored.process_batch(["b"])
    _end(restored, 2)
    assert _lines(out) == ["a", "b"]
    assert os.listdir(out) == _visible(out)  # no marker, no hidden part left


def test_a_resumed_part_goes_with_its_dead_client(tmp_path: Path, client_dir: Any) -> None:
    checkpoints, die = client_dir
    out = tmp_path / "out"
    op = _start(_sink(out), temporary_dir=checkpoints)
    op.process_batch(["a"])
    snap = _checkpoint(op, 1)
    _crash(op)
    restored = _start(_sink(out), _restore(1, snap), attempt=1, temporary_dir=checkpoints)
    restored.process_batch(["b"])
    _crash(restored)
    die()
    shutil.rmtree(checkpoints)
    _start(_sink(out), attempt=2).close()  # any later writer into the directory sweeps it
    assert os.listdir(out) == []


def test_a_savepoint_of_a_resumed_part_survives_its_client(tmp_path: Path, client_dir: Any) -> None:
    checkpoints, die = client_dir
    out = tmp_path / "out"
    op = _start(_sink(out), temporary_dir=checkpoints)
    op.process_batch(["a"])
    snap = _checkpoint(op, 1)
    _crash(op)
    restored = _start(_sink(out), _restore(1, snap), attempt=1, temporary_dir=checkpoints)
    restored.process_batch(["b"])
    savepoint = _snapshot(restored, 2, savepoint=True)  # complete; the client dies before it is notified
    restored.process_batch(["c"])
    _crash(restored)
    die()
    shutil.rmtree(checkpoints)
    _start(_sink(out), attempt=2).close()
    [kept] = _in_progress(out)  # the savepoint's part
    assert (out / kept).read_text() == "a\nb\n"
    again = _start(_sink(out), _restore(2, savepoint))
    again.process_batch(["c"])
    _end(again, 3)
    assert _lines(out) == ["a", "b", "c"] and _in_progress(out) == []
    assert json.dumps(_markers(out)) == "[]"
