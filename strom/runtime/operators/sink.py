"""Sink operators: ``SinkWriterOperator`` (Sink API), ``StreamSink`` (SinkFunction), print and collect."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from strom.api.functions import SinkFunction, as_callable
from strom.api.sink import Sink, SinkWriter, SinkWriterContext
from strom.runtime.operators.base import OperatorEventGateway, StreamOperator
from strom.runtime.operators.simple import AbstractUdfStreamOperator

__all__ = [
    "CollectBatchEvent",
    "CollectSinkOperator",
    "PrintSinkFunction",
    "SinkWriterOperator",
    "StreamSink",
]


class SinkWriterOperator(StreamOperator):
    def __init__(self, sink: Sink[Any]) -> None:
        super().__init__()
        self.sink = sink
        self._writer: SinkWriter[Any] | None = None

    def open(self) -> None:
        ctx = self.runtime_context
        assert ctx is not None
        try:
            self._writer = self.sink.create_writer(
                SinkWriterContext(
                    subtask_index=ctx.info.subtask_index,
                    parallelism=ctx.info.parallelism,
                    attempt_number=ctx.info.attempt_number,
                )
            )
        except Exception as exc:
            raise self.user_error(exc, None) from exc

    def process_batch(self, batch: list[Any]) -> None:
        assert self._writer is not None
        try:
            self._writer.write_batch(batch)
        except Exception as exc:
            raise self.user_error(exc, batch, batch[0]) from exc
        self._records_in += len(batch)

    def finish(self) -> None:
        if self._writer is not None:
            try:
                self._writer.flush(True)
            except Exception as exc:
                raise self.user_error(exc, None) from exc

    def close(self) -> None:
        writer, self._writer = self._writer, None
        if writer is not None:
            try:
                writer.close()
            except Exception as exc:
                raise self.user_error(exc, None) from exc


class StreamSink(AbstractUdfStreamOperator):
    """Calls ``invoke(value, context)`` of a :class:`SinkFunction` (or ``fn(value)``) per record."""

    def __init__(self, fn: object) -> None:
        super().__init__(fn)
        if isinstance(fn, SinkFunction):
            self._invoke: Callable[..., Any] = fn.invoke
            self._with_context = True
        else:
            self._invoke = as_callable(fn, SinkFunction, "invoke", "add_sink()")
            self._with_context = False

    def process_batch(self, batch: list[Any]) -> None:
        f = self._invoke
        v = None
        try:
            if self._with_context:
                for v in batch:
                    f(v, None)
            else:
                for v in batch:
                    f(v)
        except Exception as exc:
            raise self.user_error(exc, batch, v) from exc
        self._records_in += len(batch)


class PrintSinkFunction(SinkFunction[Any]):
    """Writes each record to stdout, prefixed ``"<subtask>> "`` when the sink runs in parallel (as Flink)."""

    def __init__(self, sink_identifier: str = "", to_stderr: bool = False) -> None:
        self.sink_identifier = sink_identifier
        self.to_stderr = to_stderr
        self._prefix = ""

    def open(self, runtime_context: Any) -> None:
        n = runtime_context.get_number_of_parallel_subtasks()
        i = runtime_context.get_index_of_this_subtask()
        ident = f"{self.sink_identifier}:" if self.sink_identifier else ""
        self._prefix = f"{ident}{i + 1}> " if n > 1 else (f"{self.sink_identifier}> " if ident else "")

    def invoke(self, value: Any, context: Any) -> None:
        stream = sys.stderr if self.to_stderr else sys.stdout
        stream.write(f"{self._prefix}{value}\n")


class PrintSinkOperator(StreamSink):
    """Batch-at-a-time print: one write per batch."""

    def process_batch(self, batch: list[Any]) -> None:
        fn = self.user_function
        assert isinstance(fn, PrintSinkFunction)
        stream = sys.stderr if fn.to_stderr else sys.stdout
        p = fn._prefix
        stream.write("".join([f"{p}{v}\n" for v in batch]))
        stream.flush()
        self._records_in += len(batch)


@dataclass(frozen=True, slots=True, kw_only=True)
class CollectBatchEvent:
    """Sent by a collect sink subtask to the JobMaster: a batch of results, or its end."""

    sink_id: str
    subtask_index: int
    records: list[Any]
    end: bool = False


class CollectSinkOperator(StreamOperator):
    """Ships records to the client through the JobMaster (``execute_and_collect``)."""

    def __init__(self, sink_id: str, batch_size: int = 1024) -> None:
        super().__init__()
        self.sink_id = sink_id
        self.batch_size = batch_size
        self.gateway: OperatorEventGateway | None = None
        self._buffer: list[Any] = []

    def process_batch(self, batch: list[Any]) -> None:
        self._buffer.extend(batch)
        self._records_in += len(batch)
        if len(self._buffer) >= self.batch_size:
            self._send(end=False)

    def flush(self) -> None:
        if self._buffer:
            self._send(end=False)

    def finish(self) -> None:
        self._send(end=True)

    def _send(self, *, end: bool) -> None:
        assert self.gateway is not None and self.runtime_context is not None
        records, self._buffer = self._buffer, []
        self.gateway.send_event_to_coordinator(
            CollectBatchEvent(
                sink_id=self.sink_id,
                subtask_index=self.runtime_context.info.subtask_index,
                records=records,
                end=end,
            )
        )
