"""``OperatorChain``: the operators of one task, wired head to tail.

Chained operators call each other directly (a chained output *is* the next operator's
``process_batch``); network outputs are :class:`RecordWriter` s. Operators open tail first, so every
operator's successors are ready before it emits, and finish head first, so what an operator emits on
``finish`` still reaches operators that have not finished yet.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from typing import Any

from strom.exceptions import SerializationError
from strom.graph.job_graph import ChainedOperatorConfig
from strom.runtime.network.record_writer import RecordWriter
from strom.runtime.operators.base import (
    OperatorEventGateway,
    StreamingRuntimeContext,
    StreamOperator,
    TaskInfo,
)
from strom.runtime.operators.sink import CollectSinkOperator

__all__ = ["OperatorChain"]


class _ChainingOutput:
    __slots__ = ("emit",)

    def __init__(self, emit: Callable[[list[Any]], None]) -> None:
        self.emit = emit


class _BroadcastingOutput:
    __slots__ = ("_targets",)

    def __init__(self, targets: Sequence[Callable[[list[Any]], None]]) -> None:
        self._targets = list(targets)

    def emit(self, batch: list[Any]) -> None:
        for t in self._targets:
            t(batch)


class _DiscardingOutput:
    __slots__ = ()

    def emit(self, batch: list[Any]) -> None:
        return None


class OperatorChain:
    def __init__(
        self,
        configs: Sequence[ChainedOperatorConfig],
        info: TaskInfo,
        make_writer: Callable[[str, StreamOperator], RecordWriter],
        gateway: OperatorEventGateway,
    ) -> None:
        self.configs = list(configs)
        self.operators: list[StreamOperator] = [self._load(c) for c in self.configs]
        self.record_writers: list[RecordWriter] = []
        for i in reversed(range(len(self.operators))):
            op = self.operators[i]
            cfg = self.configs[i]
            targets: list[Callable[[list[Any]], None]] = [self.operators[j].process_batch for j in cfg.chained_outputs]
            for rid in cfg.network_outputs:
                writer = make_writer(rid, op)
                self.record_writers.append(writer)
                targets.append(writer.emit)
            output: Any
            if not targets:
                output = _DiscardingOutput()
            elif len(targets) == 1:
                output = _ChainingOutput(targets[0])
            else:
                output = _BroadcastingOutput(targets)
            ctx = StreamingRuntimeContext(info, operator_name=op.name)
            if isinstance(op, CollectSinkOperator):
                op.gateway = gateway
            op.setup(ctx, output)
        self.head = self.operators[0]

    @staticmethod
    def _load(cfg: ChainedOperatorConfig) -> StreamOperator:
        try:
            op = pickle.loads(cfg.serialized_operator)
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
