"""One-input operators for stateless functions: ``StreamMap``, ``StreamFlatMap``, ``StreamFilter``,
``ProcessOperator``. Each loops over its batch in one Python frame, so the per-record cost is the user
call and an append.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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

__all__ = ["AbstractUdfStreamOperator", "ProcessOperator", "StreamFilter", "StreamFlatMap", "StreamMap"]


class AbstractUdfStreamOperator(StreamOperator):
    """An operator around one user function, opened and closed with the operator."""

    def __init__(self, user_function: object) -> None:
        super().__init__()
        self.user_function = user_function

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
