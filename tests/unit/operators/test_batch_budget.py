"""Batches are bounded by estimated bytes as well as by records: large records make short batches at the source,
after the operators that make records (map, flat_map, process) and in the collect sink; small records keep full
batches."""

from __future__ import annotations

from typing import Any

import pytest

from strom.api.source import Source, SourceReader, SourceReaderContext, SourceSplit
from strom.connectors import DataGeneratorSource, NumberSequenceSource
from strom.runtime.operators.base import StreamingRuntimeContext, StreamOperator, TaskInfo
from strom.runtime.operators.batch_budget import FIRST_BATCH, SAMPLE_EVERY, BatchBudget, sizeof
from strom.runtime.operators.simple import ProcessOperator, StreamFlatMap, StreamMap
from strom.runtime.operators.sink import CollectSinkOperator
from strom.runtime.operators.source import InputStatus, SourceOperator
from strom.runtime.streamrecord import TimestampedBatch

pytestmark = pytest.mark.timeout(60)

BIG = 200_000
MIB = 1 << 20


class Batches:
    """An operator output that keeps every batch as it came."""

    def __init__(self) -> None:
        self.batches: list[list[Any]] = []

    def emit(self, batch: list[Any]) -> None:
        self.batches.append(batch)

    def emit_side(self, tag_id: str, batch: list[Any]) -> None:
        raise AssertionError("no side outputs here")

    def emit_watermark(self, timestamp: int) -> None:
        pass

    def emit_watermark_status(self, idle: bool) -> None:
        pass

    def values(self) -> list[Any]:
        return [v for b in self.batches for v in b]


def _set_up(op: StreamOperator, *, batch_bytes: int = MIB, batch_size: int = 1024) -> Batches:
    info = TaskInfo(
        job_id="job",
        job_name="test",
        task_name="task",
        subtask_index=0,
        parallelism=1,
        max_parallelism=128,
        attempt_number=0,
        batch_size=batch_size,
        batch_bytes=batch_bytes,
    )
    out = Batches()
    op.setup(StreamingRuntimeContext(info, operator_name=op.name), out)
    return out


def _run_source(op: SourceOperator, splits: Any, out: Batches | None = None) -> Batches:
    out = _set_up(op) if out is None else out
    op.splits = splits
    op.initialize_state(None)
    op.open()
    while op.emit_next() is not InputStatus.END_OF_INPUT:
        pass
    op.close()
    return out


def test_a_source_of_large_records_polls_a_few_at_a_time() -> None:
    op = SourceOperator(DataGeneratorSource(lambda i: bytes([i % 256]) * BIG, 200))
    out = _set_up(op)
    ahead: list[int] = []  # records made by the reader and not yet emitted, at each record made

    def big(i: int) -> bytes:
        ahead.append(i - len(out.values()))
        return bytes([i % 256]) * BIG

    source = DataGeneratorSource(big, 200)
    op.source = source
    _run_source(op, source.create_splits(1), out)
    assert out.values() == [bytes([i % 256]) * BIG for i in range(200)]
    # nothing is known before the first poll (16 records); after it, a poll holds what fits into 1 MiB: 5 records
    assert max(ahead) == FIRST_BATCH - 1 and max(ahead[FIRST_BATCH:]) == MIB // (BIG + 33) - 1
    assert max(len(b) for b in out.batches) == MIB // (BIG + 33)


def test_a_source_of_small_records_keeps_full_batches() -> None:
    source = NumberSequenceSource(0, 9_999)
    out = _run_source(SourceOperator(source), source.create_splits(1))
    assert out.values() == list(range(10_000))
    assert [len(b) for b in out.batches[1:-1]] == [1024] * 9


def test_a_flat_map_that_makes_large_records_emits_them_in_bounded_batches() -> None:
    op = StreamFlatMap(lambda i: [(i, b"y" * BIG), (i, b"z" * BIG)])
    out = _set_up(op)
    op.open()
    op.process_batch(TimestampedBatch(list(range(1024)), list(range(1000, 2024))))
    expected = [(i, c * BIG) for i in range(1024) for c in (b"y", b"z")]
    assert out.values() == expected
    assert [t for b in out.batches for t in b.timestamps] == [1000 + i for i in range(1024) for _ in (0, 1)]
    # the first slice measures (16 inputs); after it every batch stays within 1 MiB + one input's records
    assert all(sum(sizeof(v) for v in b) <= MIB + 2 * (BIG + 100) for b in out.batches[1:])
    assert max(len(b) for b in out.batches) <= 2 * FIRST_BATCH


@pytest.mark.parametrize(
    "make", [lambda: StreamMap(lambda i: "s" * BIG), lambda: ProcessOperator(lambda i, ctx: ["s" * BIG])]
)
def test_map_and_process_emit_large_records_in_bounded_batches(make: Any) -> None:
    op = make()
    out = _set_up(op)
    op.open()
    for _ in range(3):
        op.process_batch(list(range(1024)))
    assert len(out.values()) == 3 * 1024
    assert max(len(b) for b in out.batches[1:]) <= MIB // BIG


def test_operators_on_small_records_pass_whole_batches_on() -> None:
    op = StreamMap(lambda i: (i, "k%d" % (i % 100), i * 2, i))  # noqa: UP031
    out = _set_up(op)
    op.open()
    for _ in range(4):
        op.process_batch(list(range(1024)))
    # the first batch is measured on its first slice, then every batch passes whole
    assert [len(b) for b in out.batches] == [FIRST_BATCH, 1024 - FIRST_BATCH, 1024, 1024, 1024]


def test_the_budget_follows_the_records_and_estimates_nested_sizes() -> None:
    b = BatchBudget(MIB, max_records=1024)
    assert b.records == FIRST_BATCH
    b.observe([(1, "a")] * 16, 16)
    assert b.records == 1024  # small records: the record count bounds
    for _ in range(SAMPLE_EVERY):  # re-estimated every few batches
        b.observe([(1, [b"x" * BIG])] * 4, 2)  # two records per input, nested two levels down
    assert b.records == MIB // (2 * (BIG + 33) + 56 + 64 + 28)
    assert sizeof({"k": "v" * 1000}) > 1000 and sizeof(list(range(1000))) > 8 * 1000 + 28 * 1000
    ts = TimestampedBatch(list(range(10)), list(range(10, 20)))
    b.records = 4
    parts = list(b.slices(ts))
    assert [list(p) for p in parts] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert [p.timestamps for p in parts] == [[10, 11, 12, 13], [14, 15, 16, 17], [18, 19]]  # type: ignore[attr-defined]


def _collect_sink() -> tuple[CollectSinkOperator, list[Any]]:
    """An open collect sink and the events it sends to its coordinator."""
    sent: list[Any] = []

    class Gateway:
        def send_event_to_coordinator(self, event: object) -> None:
            sent.append(event)

    op = CollectSinkOperator("sink-1")
    _set_up(op)
    op.gateway = Gateway()
    op.open()
    return op, sent


def test_the_collect_sink_ships_large_records_in_small_batches() -> None:
    op, sent = _collect_sink()
    for i in range(40):
        op.process_batch([bytes([i]) * BIG])
    op.finish()
    assert [r for e in sent for r in e.records] == [bytes([i]) * BIG for i in range(40)]
    assert max(len(e.records) for e in sent) == MIB // (BIG + 33)


def test_the_collect_sink_ships_small_records_a_thousand_at_a_time() -> None:
    op, sent = _collect_sink()
    for _ in range(4):
        op.process_batch(list(range(512)))
    assert [len(e.records) for e in sent] == [1024, 1024]


class _OnceReader(SourceReader[int]):
    """Takes ``batch_size`` once, when created (as readers written before it adapted do)."""

    def __init__(self, context: SourceReaderContext) -> None:
        self.batch_size = context.batch_size
        self.next = 0

    def add_splits(self, splits: Any) -> None:
        pass

    def poll_batch(self) -> list[int] | None:
        if self.next >= 4096:
            return None
        self.next += self.batch_size
        return list(range(self.next - self.batch_size, self.next))


class _OnceSource(Source[int]):
    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        return [SourceSplit(split_id="once")]

    def create_reader(self, context: SourceReaderContext) -> SourceReader[int]:
        return _OnceReader(context)


def test_a_reader_that_reads_batch_size_once_still_polls_full_batches() -> None:
    out = _run_source(SourceOperator(_OnceSource()), [SourceSplit(split_id="once")])
    assert out.values() == list(range(4096))
    assert [len(b) for b in out.batches] == [1024] * 4
