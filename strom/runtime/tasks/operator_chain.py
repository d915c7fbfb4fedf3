"""``OperatorChain``: the operators of one task, wired head to tail.

Chained operators call each other directly (a chained output *is* the next operator's
``process_batch``); network outputs are :class:`RecordWriter` s. Side outputs (``OutputTag``) are outputs of
their own, chained or not, reached through ``emit_side``; watermarks and watermark statuses go to every
output of an operator. Operators open tail first, so every
operator's successors are ready before it emits, and finish head first, so what an operator emits on
``finish`` still reaches operators that have not finished yet.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from strom.exceptions import SerializationError
from strom.graph.job_graph import ChainedOperatorConfig
from strom.runtime.network.record_writer import RecordWriter
from strom.runtime.operators.base import (
    StreamingRuntimeContext,
    StreamOperator,
    TaskInfo,
)
from strom.runtime.operators.coordination import OperatorEventGateway, TaskOperatorEventGateway
from strom.runtime.operators.fused_loop import fuse_stateless_runs
from strom.runtime.operators.sink import CollectSinkOperator
from strom.runtime.taskexecutor.user_code_class_loader import load_user_code
from strom.runtime.tasks.mailbox import MailboxExecutor, TaskMailbox
from strom.runtime.tasks.processing_time_service import ProcessingTimeService

__all__ = ["OperatorChain"]


class _Target(Protocol):
    """One destination of an operator's output: the next chained operator or a record writer."""

    def emit(self, batch: list[Any]) -> None: ...

    def emit_watermark(self, timestamp: int) -> None: ...

    def emit_watermark_status(self, idle: bool) -> None: ...


class _ChainedTarget:
    """The next operator of the chain, as a target."""

    __slots__ = ("emit", "emit_watermark", "emit_watermark_status")

    def __init__(self, op: StreamOperator) -> None:
        self.emit: Callable[[list[Any]], None] = op.process_batch
        self.emit_watermark = op.process_watermark
        self.emit_watermark_status = op.process_watermark_status


class _ChainOutput:
    """An operator's :class:`~strom.runtime.operators.base.Output`: main targets, side targets by tag.

    ``emit`` is bound straight to the only main target's when there is one (the common case costs one call)."""

    __slots__ = ("_all", "_main", "_side", "emit")

    def __init__(self, main: Sequence[_Target], side: dict[str, list[_Target]]) -> None:
        self._main = list(main)
        self._side = side
        self._all = self._main + [t for targets in side.values() for t in targets]
        self.emit: Callable[[list[Any]], None]
        if not self._main:
            self.emit = self._discard
        elif len(self._main) == 1:
            self.emit = self._main[0].emit
        else:
            self.emit = self._broadcast

    def retarget(self, old: Callable[[list[Any]], None], new: Callable[[list[Any]], None]) -> None:
        """Main targets that emitted to ``old`` emit to ``new`` (a fused run's loop in place of its head)."""
        for t in self._main:
            if isinstance(t, _ChainedTarget) and t.emit == old:
                t.emit = new
        if len(self._main) == 1:
            self.emit = self._main[0].emit

    def _discard(self, batch: list[Any]) -> None:
        return None

    def _broadcast(self, batch: list[Any]) -> None:
        for t in self._main:
            t.emit(batch)

    def emit_side(self, tag_id: str, batch: list[Any]) -> None:
        for t in self._side.get(tag_id, ()):
            t.emit(batch)

    def emit_watermark(self, timestamp: int) -> None:
        for t in self._all:
            t.emit_watermark(timestamp)

    def emit_watermark_status(self, idle: bool) -> None:
        for t in self._all:
            t.emit_watermark_status(idle)


class OperatorChain:
    def __init__(
        self,
        configs: Sequence[ChainedOperatorConfig],
        info: TaskInfo,
        make_writer: Callable[[str, StreamOperator], RecordWriter],
        gateway: TaskOperatorEventGateway,
        processing_time_service: ProcessingTimeService | None = None,
        mailbox: TaskMailbox | None = None,
    ) -> None:
        self.configs = list(configs)
        self.operators: list[StreamOperator] = [self._load(c) for c in self.configs]
        self.record_writers: list[RecordWriter] = []
        self.processing_time_service = processing_time_service or ProcessingTimeService()
        outputs: list[_ChainOutput] = []
        for i in reversed(range(len(self.operators))):
            op = self.operators[i]
            cfg = self.configs[i]
            main: list[_Target] = [_ChainedTarget(self.operators[j]) for j in cfg.chained_outputs]
            for rid in cfg.network_outputs:
                main.append(self._writer(make_writer, rid, op))
            side: dict[str, list[_Target]] = {}
            for tag_id, j in cfg.chained_side_outputs:
                side.setdefault(tag_id, []).append(_ChainedTarget(self.operators[j]))
            for tag_id, rid in cfg.network_side_outputs:
                side.setdefault(tag_id, []).append(self._writer(make_writer, rid, op))
            ctx = StreamingRuntimeContext(info, operator_name=op.name)
            ctx.processing_time_service = self.processing_time_service
            ctx.mailbox_executor = MailboxExecutor(mailbox) if mailbox is not None else None
            if hasattr(op, "coordinator_provider"):  # an operator with a coordinator on the JobMaster
                op.gateway = OperatorEventGateway(gateway, op.operator_id)  # type: ignore[attr-defined]
            output = _ChainOutput(main, side)
            outputs.append(output)
            op.setup(ctx, output)
        self.head = self.operators[0]
        self._by_id = {op.operator_id: op for op in self.operators}
        self._fuse_stateless_runs(outputs)

    def _fuse_stateless_runs(self, outputs: list[_ChainOutput]) -> None:
        """Runs of chained stateless maps (and a last filter) take a batch in one loop
        (:mod:`~strom.runtime.operators.fused_loop`): what fed a run's head feeds the run."""
        for run in fuse_stateless_runs(self.operators):
            for out in outputs:
                out.retarget(run.stages[0].process_batch, run.process_batch)

    def handle_operator_event(self, operator_id: str, event: object) -> None:
        """Task thread: an event from the coordinator of the operator ``operator_id``."""
        op = self._by_id.get(operator_id)
        if op is None:
            raise ValueError(f"expected an operator of this task; got an event for unknown operator {operator_id!r}")
        op.handle_operator_event(event)

    def _writer(
        self, make_writer: Callable[[str, StreamOperator], RecordWriter], rid: str, op: StreamOperator
    ) -> RecordWriter:
        writer = make_writer(rid, op)
        self.record_writers.append(writer)
        return writer

    @staticmethod
    def _load(cfg: ChainedOperatorConfig) -> StreamOperator:
        try:
            op = load_user_code(cfg.serialized_operator)
        except Exception as exc:
            raise SerializationError(
                f"operator '{cfg.name}' could not be deserialized in the TaskManager: {type(exc).__name__}: "
                f"{exc}; hint: functions must be importable or defined in the job script"
            ) from exc
        assert isinstance(op, StreamOperator)
        return op

    def open(self) -> None:
        for op in reversed(self.operators):
            op.open()

    def finish_operators(self) -> None:
        """End of input: every operator emits what it buffered; the outputs are flushed."""
        for op in self.operators:
            op.finish()
        for w in self.record_writers:
            w.flush()

    def end_output(self) -> None:
        """The task's last word: EndOfPartition on every output."""
        for w in self.record_writers:
            w.finish()

    def finish(self) -> None:
        self.finish_operators()
        self.end_output()

    def flush(self) -> None:
        for op in self.operators:
            if isinstance(op, CollectSinkOperator):
                op.flush()
        for w in self.record_writers:
            w.flush()

    def close(self) -> BaseException | None:
        """Close every operator; return the first error instead of raising, so all get closed."""
        first: BaseException | None = None
        for op in self.operators:
            try:
                op.close()
            except Exception as exc:
                first = first or exc
        return first
