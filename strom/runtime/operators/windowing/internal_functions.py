"""How a firing pane becomes output (Flink's ``InternalWindowFunction`` family), as one callable shape:
``fn(key, window, context, elements) -> iterable | None``, plus ``clear(window, context)``.

The user's function may be a ``WindowFunction`` / ``AllWindowFunction`` (``apply``), a ``ProcessWindowFunction``
/ ``ProcessAllWindowFunction`` (``process`` with a context), a plain callable, or absent (``reduce`` / ``aggregate``
alone emit the combined value). Evicting windows keep every element, so their ``reduce`` / ``aggregate``
combine the remaining elements when the pane fires (Flink's ``ReduceApplyWindowFunction`` and friends).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

from strom.api.functions import RichFunction, close_function, open_function
from strom.api.state import AggregateFunction
from strom.api.windowing.functions import (
    AllWindowFunction,
    ProcessAllWindowFunction,
    ProcessWindowFunction,
    WindowFunction,
)
from strom.exceptions import InvalidProgramError

__all__ = ["InternalWindowFunction", "internal_window_function"]

WindowCall = Callable[[Any, Any, Any, list[Any]], Iterable[Any] | None]


class InternalWindowFunction:
    """The user's window function (if any) normalized; ``pre`` combines an evicting pane's elements first."""

    def __init__(self, user_function: object, *, keyed: bool, pre: Callable[[list[Any]], Any] | None = None) -> None:
        self.user_function = user_function
        self.keyed = keyed
        self.pre = pre
        self._call: WindowCall = _normalize(user_function, keyed)
        self._clear: Callable[[Any], None] | None = None
        for base in (ProcessWindowFunction, ProcessAllWindowFunction):
            # the default clear does nothing: skip the call
            if isinstance(user_function, base) and type(user_function).clear is not base.clear:
                self._clear = user_function.clear

    @property
    def keyed_process(self) -> Callable[[Any, Any, list[Any]], Iterable[Any] | None] | None:
        """A keyed ``ProcessWindowFunction``'s own ``process(key, context, elements)`` when nothing combines the
        pane first (the fast path calls it without the adapter frame); ``None`` for any other function."""
        if self.pre is None and self.keyed and isinstance(self.user_function, ProcessWindowFunction):
            return self.user_function.process
        return None

    @property
    def direct_call(self) -> WindowCall:
        """What ``__call__`` does, one frame shorter when no evicting pane combines first (the fast path)."""
        return self._call if self.pre is None else self.__call__

    def __call__(self, key: Any, window: Any, context: Any, elements: list[Any]) -> Iterable[Any] | None:
        if self.pre is not None:
            if not elements:
                return None
            elements = [self.pre(elements)]
        return self._call(key, window, context, elements)

    def clear(self, context: Any) -> None:
        if self._clear is not None:
            self._clear(context)

    def open(self, runtime_context: Any) -> None:
        if isinstance(self.user_function, RichFunction):
            open_function(self.user_function, runtime_context)

    def close(self) -> None:
        if isinstance(self.user_function, RichFunction):
            close_function(self.user_function)


def _normalize(fn: object, keyed: bool) -> WindowCall:
    if fn is None:
        return lambda key, window, context, elements: elements
    if isinstance(fn, ProcessWindowFunction):
        process = fn.process
        return lambda key, window, context, elements: process(key, context, elements)
    if isinstance(fn, ProcessAllWindowFunction):
        process_all = fn.process
        return lambda key, window, context, elements: process_all(context, elements)
    if isinstance(fn, WindowFunction):
        apply = fn.apply
        return lambda key, window, context, elements: apply(key, window, elements)
    if isinstance(fn, AllWindowFunction):
        apply_all = fn.apply
        return lambda key, window, context, elements: apply_all(window, elements)
    if isinstance(fn, type):
        raise InvalidProgramError(
            f"expected a window function instance; got the class {fn.__name__}; hint: pass {fn.__name__}()"
        )
    if callable(fn):
        if keyed:
            return lambda key, window, context, elements: fn(key, window, elements)
        return lambda key, window, context, elements: fn(window, elements)
    raise InvalidProgramError(
        f"expected a WindowFunction, ProcessWindowFunction or a callable; got a {type(fn).__name__} ({fn!r:.60}); "
        "hint: apply(lambda key, window, elements: ...) or process(MyProcessWindowFunction())"
    )


def reduce_all(reduce: Callable[[Any, Any], Any]) -> Callable[[list[Any]], Any]:
    return lambda elements: functools.reduce(reduce, elements)


def aggregate_all(fn: AggregateFunction[Any, Any, Any]) -> Callable[[list[Any]], Any]:
    def combine(elements: list[Any]) -> Any:
        acc = fn.create_accumulator()
        for e in elements:
            acc = fn.add(e, acc)
        return fn.get_result(acc)

    return combine


def internal_window_function(
    user_function: object,
    *,
    keyed: bool,
    reduce: Callable[[Any, Any], Any] | None = None,
    aggregate: AggregateFunction[Any, Any, Any] | None = None,
    evicting: bool = False,
) -> InternalWindowFunction:
    """The internal function of a window operator; ``evicting`` panes combine at fire time."""
    pre: Callable[[list[Any]], Any] | None = None
    if evicting and reduce is not None:
        pre = reduce_all(reduce)
    elif evicting and aggregate is not None:
        pre = aggregate_all(aggregate)
    return InternalWindowFunction(user_function, keyed=keyed, pre=pre)
