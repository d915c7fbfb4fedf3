"""A one-input operator test harness (Flink's ``KeyedOneInputStreamOperatorTestHarness``): drive an operator with
records, watermarks and a manual processing-time clock; read what it emitted, in order; snapshot and restore."""

from __future__ import annotations

from typing import Any

from strom.runtime.checkpoint.snapshot import OperatorRestoreState, OperatorSnapshot
from strom.runtime.operators.base import StreamingRuntimeContext, StreamOperator, TaskInfo
from strom.runtime.streamrecord import timestamps_of, with_timestamps
from strom.runtime.tasks.processing_time_service import ProcessingTimeService


class Record:
    """An emitted record: value and timestamp (Flink's ``StreamRecord``)."""

    __slots__ = ("timestamp", "value")

    def __init__(self, value: Any, timestamp: int | None) -> None:
        self.value, self.timestamp = value, timestamp

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Record) and (self.value, self.timestamp) == (other.value, other.timestamp)

    def __repr__(self) -> str:
        return f"Record({self.value!r}, {self.timestamp})"


class WatermarkOut:
    __slots__ = ("timestamp",)

    def __init__(self, timestamp: int) -> None:
        self.timestamp = timestamp

    def __eq__(self, other: object) -> bool:
        return isinstance(other, WatermarkOut) and self.timestamp == other.timestamp

    def __repr__(self) -> str:
        return f"WatermarkOut({self.timestamp})"


class CollectingOutput:
    def __init__(self) -> None:
        self.events: list[Any] = []
        self.side: dict[str, list[Record]] = {}

    @staticmethod
    def _records(batch: list[Any]) -> list[Record]:
        ts = timestamps_of(batch) or [None] * len(batch)
        return [Record(v, t) for v, t in zip(batch, ts, strict=True)]

    def emit(self, batch: list[Any]) -> None:
        self.events.extend(self._records(batch))

    def emit_side(self, tag_id: str, batch: list[Any]) -> None:
        self.side.setdefault(tag_id, []).extend(self._records(batch))

    def emit_watermark(self, timestamp: int) -> None:
        self.events.append(WatermarkOut(timestamp))

    def emit_watermark_status(self, idle: bool) -> None:
        self.events.append("idle" if idle else "active")


class OperatorHarness:
    def __init__(
        self,
        operator: StreamOperator,
        *,
        processing_time: int = 0,
        max_parallelism: int = 128,
        yielded_output_tags: bool = False,
        state_backend: str = "hashmap",
    ) -> None:
        self.operator = operator
        self.now = processing_time
        self.pts = ProcessingTimeService(clock=lambda: self.now)
        info = TaskInfo(
            job_id="job",
            job_name="test",
            task_name="task",
            subtask_index=0,
            parallelism=1,
            max_parallelism=max_parallelism,
            attempt_number=0,
            auto_watermark_interval_ms=0,
            yielded_output_tags=yielded_output_tags,
            state_backend=state_backend,
        )
        ctx = StreamingRuntimeContext(info, operator_name=operator.name)
        ctx.processing_time_service = self.pts
        self.output = CollectingOutput()
        operator.setup(ctx, self.output)

    def open(self, restore: OperatorSnapshot | None = None) -> OperatorHarness:
        state = None
        if restore is not None:
            restore = restore.resolve()  # the asynchronous part of a checkpoint
        if restore is not None and not restore.is_empty:
            state = OperatorRestoreState(1, keyed=dict(restore.keyed), operator=(restore.operator or b"",))
        self.operator.initialize_state(state)
        self.operator.open()
        return self

    def process_element(self, value: Any, timestamp: int | None = None) -> None:
        batch = with_timestamps([value], None if timestamp is None else [timestamp])
        self.operator.process_batch(batch)

    def process_elements(self, pairs: list[tuple[Any, int]]) -> None:
        self.operator.process_batch(with_timestamps([v for v, _ in pairs], [t for _, t in pairs]))

    def process_watermark(self, timestamp: int) -> None:
        self.operator.process_watermark(timestamp)

    def set_processing_time(self, time: int) -> None:
        self.now = time
        self.pts.fire_due()

    def snapshot(self) -> OperatorSnapshot:
        snap = self.operator.snapshot_state(1, 0)
        assert snap is not None
        return snap.resolve()  # the synchronous part, then the asynchronous part

    def extract_output(self) -> list[Any]:
        out, self.output.events = self.output.events, []
        return out

    def records(self) -> list[Any]:
        """The values emitted so far (watermarks left out), cleared."""
        return [e.value for e in self.extract_output() if isinstance(e, Record)]

    def side_output(self, tag_id: str) -> list[Record]:
        return self.output.side.pop(tag_id, [])


class TwoInputOperatorHarness(OperatorHarness):
    """Flink's ``KeyedTwoInputStreamOperatorTestHarness``: records and watermarks per input."""

    def process_element1(self, value: Any, timestamp: int | None = None) -> None:
        batch = with_timestamps([value], None if timestamp is None else [timestamp])
        self.operator.process_batch1(batch)  # type: ignore[attr-defined]

    def process_element2(self, value: Any, timestamp: int | None = None) -> None:
        batch = with_timestamps([value], None if timestamp is None else [timestamp])
        self.operator.process_batch2(batch)  # type: ignore[attr-defined]

    def process_watermark1(self, timestamp: int) -> None:
        self.operator.process_watermark1(timestamp)  # type: ignore[attr-defined]

    def process_watermark2(self, timestamp: int) -> None:
        self.operator.process_watermark2(timestamp)  # type: ignore[attr-defined]

    def process_watermark_status1(self, idle: bool) -> None:
        self.operator.process_watermark_status1(idle)  # type: ignore[attr-defined]

    def process_watermark_status2(self, idle: bool) -> None:
        self.operator.process_watermark_status2(idle)  # type: ignore[attr-defined]

    def process_watermark(self, timestamp: int) -> None:
        """Both inputs reach ``timestamp``."""
        self.process_watermark1(timestamp)
        self.process_watermark2(timestamp)
