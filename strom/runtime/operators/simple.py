"""One-input operators for stateless functions: ``StreamMap``, ``StreamFlatMap``, ``StreamFilter``,
``ProcessOperator``. Each loops over its batch in one Python frame, so the per-record cost is the user
call and an append.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from strom.api.checkpoint import (
    CheckpointedFunction,
    CheckpointListener,
    FunctionInitializationContext,
    FunctionSnapshotContext,
)
from strom.api.functions import (
    FilterFunction,
    FlatMapFunction,
    MapFunction,
    ProcessFunction,
    as_callable,
    close_function,
    open_function,
)
from strom.runtime.operators.base import StreamOperator

if TYPE_CHECKING:
    from strom.runtime.checkpoint.snapshot import OperatorRestoreState, OperatorSnapshot

__all__ = ["AbstractUdfStreamOperator", "ProcessOperator", "StreamFilter", "StreamFlatMap", "StreamMap"]


class AbstractUdfStreamOperator(StreamOperator):
    """An operator around one user function, opened and closed with the operator.

    A function implementing :class:`CheckpointedFunction` gets ``initialize_state`` before ``open`` and
    ``snapshot_state`` at every checkpoint; one implementing :class:`CheckpointListener` hears of every
    completed and aborted checkpoint (Flink's ``AbstractUdfStreamOperator`` / ``StreamingFunctionUtils``).
    """

    def __init__(self, user_function: object) -> None:
        super().__init__()
        self.user_function = user_function

    def initialize_state(self, restore: OperatorRestoreState | None) -> None:
        super().initialize_state(restore)
        fn = self.user_function
        if isinstance(fn, CheckpointedFunction):
            ctx = FunctionInitializationContext(
                self.operator_state_backend, self.keyed_backend, self.restored_checkpoint_id
            )
            try:
                fn.initialize_state(ctx)
            except Exception as exc:
                raise self.user_error(exc, None, role=f"initialize_state of operator '{self.name}'") from exc

    def snapshot_state(self, checkpoint_id: int, timestamp_ms: int) -> OperatorSnapshot | None:
        fn = self.user_function
        if isinstance(fn, CheckpointedFunction):
            try:
                fn.snapshot_state(FunctionSnapshotContext(checkpoint_id, timestamp_ms))
            except Exception as exc:
                raise self.user_error(exc, None, role=f"snapshot_state of operator '{self.name}'") from exc
        return super().snapshot_state(checkpoint_id, timestamp_ms)

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        fn = self.user_function
        if isinstance(fn, CheckpointListener):
            try:
                fn.notify_checkpoint_complete(checkpoint_id)
            except Exception as exc:
                raise self.user_error(exc, None, role=f"notify_checkpoint_complete of '{self.name}'") from exc

    def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        fn = self.user_function
        if isinstance(fn, CheckpointListener):
            try:
                fn.notify_checkpoint_aborted(checkpoint_id)
            except Exception as exc:
                raise self.user_error(exc, None, role=f"notify_checkpoint_aborted of '{self.name}'") from exc

    def open(self) -> None:
        assert self.runtime_context is not None
        try:
            open_function(self.user_function, self.runtime_context)
        except Exception as exc:
            raise self.user_error(exc, None) from exc

    def close(self) -> None:
        try:
            close_function(self.user_function)
        except Exception as exc:
            raise self.user_error(exc, None) from exc


class StreamMap(AbstractUdfStreamOperator):
    def __init__(self, fn: object) -> None:
        super().__init__(fn)
        self._fn: Callable[[Any], Any] = as_callable(fn, MapFunction, "map", "map()")

    def process_batch(self, batch: list[Any]) -> None:
        f = self._fn
        out: list[Any] = []
        append = out.append
        v = None
        try:
            for v in batch:
                append(f(v))
        except Exception as exc:
            raise self.user_error(exc, batch, v) from exc
        self._records_in += len(batch)
        self.output.emit(out)


class StreamFilter(AbstractUdfStreamOperator):
    def __init__(self, fn: object) -> None:
        super().__init__(fn)
        self._fn: Callable[[Any], Any] = as_callable(fn, FilterFunction, "filter", "filter()")

    def process_batch(self, batch: list[Any]) -> None:
        f = self._fn
        out: list[Any] = []
        append = out.append
        v = None
        try:
            for v in batch:
                if f(v):
                    append(v)
        except Exception as exc:
            raise self.user_error(exc, batch, v) from exc
        self._records_in += len(batch)
        if out:
            self.output.emit(out)


class StreamFlatMap(AbstractUdfStreamOperator):
    def __init__(self, fn: object) -> None:
        super().__init__(fn)
        self._fn: Callable[[Any], Any] = as_callable(fn, FlatMapFunction, "flat_map", "flat_map()")

    def process_batch(self, batch: list[Any]) -> None:
        f = self._fn
        out: list[Any] = []
        extend = out.extend
        v = None
        try:
            for v in batch:
                r = f(v)
                if r is not None:
                    extend(r)
        except Exception as exc:
            raise self.user_error(exc, batch, v) from exc
        self._records_in += len(batch)
        if out:
            self.output.emit(out)


class _ProcessContext(ProcessFunction.Context):
    __slots__ = ()

    def timestamp(self) -> int | None:
        return None


class ProcessOperator(AbstractUdfStreamOperator):
    def __init__(self, fn: object) -> None:
        super().__init__(fn)
        self._fn: Callable[..., Any] = as_callable(fn, ProcessFunction, "process_element", "process()")
        self._ctx = _ProcessContext()

    def process_batch(self, batch: list[Any]) -> None:
        f = self._fn
        ctx = self._ctx
        out: list[Any] = []
        extend = out.extend
        v = None
        try:
            for v in batch:
                r = f(v, ctx)
                if r is not None:
                    extend(r)
        except Exception as exc:
            raise self.user_error(exc, batch, v) from exc
        self._records_in += len(batch)
        if out:
            self.output.emit(out)
