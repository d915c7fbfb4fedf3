"""Operators on a keyed stream: ``StreamGroupedReduce`` and ``KeyedProcessOperator``.

Each input batch arrives already routed by key group, so every key a subtask sees is one it owns.
The key selector runs again here (as Flink's ``setKeyContextElement``) to scope state per key.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from strom.api.functions import (
    KeyedProcessFunction,
    KeySelector,
    ReduceFunction,
    as_callable,
)
from strom.exceptions import InvalidProgramError
from strom.runtime.operators.base import StreamingRuntimeContext
from strom.runtime.operators.simple import AbstractUdfStreamOperator
from strom.runtime.state.key_groups import stable_hash
from strom.runtime.state.state_backend import create_keyed_state_backend

__all__ = ["KeyedProcessOperator", "StreamGroupedReduce", "key_selector_callable"]


def key_selector_callable(selector: object) -> Callable[[Any], Any]:
    return as_callable(selector, KeySelector, "get_key", "key_by()")


class _KeyedUdfOperator(AbstractUdfStreamOperator):
    def __init__(self, fn: object, key_selector: object) -> None:
        super().__init__(fn)
        self.key_selector = key_selector
        self._key: Callable[[Any], Any] = key_selector_callable(key_selector)

    def setup(self, runtime_context: StreamingRuntimeContext, output: Any) -> None:
        if runtime_context.keyed_backend is None:
            info = runtime_context.info
            runtime_context.keyed_backend = create_keyed_state_backend(
                info.state_backend, max_parallelism=info.max_parallelism
            )
        self.keyed_backend = runtime_context.keyed_backend
        super().setup(runtime_context, output)

    def _explain(self, exc: Exception, record: Any) -> Exception:
        """An unhashable key surfaces here when routing needed no hash (one consumer): say so plainly."""
        if isinstance(exc, TypeError):
            try:
                stable_hash(self._key(record))
            except InvalidProgramError as key_error:
                return key_error
            except Exception:  # the key selector itself failed: report the original error
                return exc
        return exc


class StreamGroupedReduce(_KeyedUdfOperator):
    """Running reduce per key: emits the new aggregate for every input record."""

    def __init__(self, fn: object, key_selector: object) -> None:
        super().__init__(fn, key_selector)
        self._reduce: Callable[[Any, Any], Any] = as_callable(fn, ReduceFunction, "reduce", "reduce()")
        self._table: dict[Any, Any] = {}

    def open(self) -> None:
        super().open()
        assert self.keyed_backend is not None
        self._table = self.keyed_backend.get_table(f"_reduce:{self.operator_id}")

    def process_batch(self, batch: list[Any]) -> None:
        key_of = self._key
        reduce = self._reduce
        table = self._table
        get = table.get
        out: list[Any] = []
        append = out.append
        missing = _MISSING
        v = None
        try:
            for v in batch:
                k = key_of(v)
                old = get(k, missing)
                new = v if old is missing else reduce(old, v)
                table[k] = new
                append(new)
        except Exception as exc:
            raise self.user_error(self._explain(exc, v), batch, v) from exc
        self._records_in += len(batch)
        self.output.emit(out)


_MISSING = object()


class _KeyedContext(KeyedProcessFunction.Context):
    __slots__ = ("key",)

    def __init__(self) -> None:
        self.key: Any = None

    def timestamp(self) -> int | None:
        return None

    def get_current_key(self) -> Any:
        return self.key


class KeyedProcessOperator(_KeyedUdfOperator):
    def __init__(self, fn: object, key_selector: object) -> None:
        super().__init__(fn, key_selector)
        self._fn: Callable[..., Any] = as_callable(fn, KeyedProcessFunction, "process_element", "KeyedStream.process()")
        self._ctx = _KeyedContext()

    def process_batch(self, batch: list[Any]) -> None:
        key_of = self._key
        f = self._fn
        ctx = self._ctx
        backend = self.keyed_backend
        assert backend is not None
        out: list[Any] = []
        extend = out.extend
        v = None
        try:
            for v in batch:
                k = key_of(v)
                ctx.key = k
                backend.current_key = k
                r = f(v, ctx)
                if r is not None:
                    extend(r)
        except Exception as exc:
            raise self.user_error(self._explain(exc, v), batch, v) from exc
        self._records_in += len(batch)
        if out:
            self.output.emit(out)
