"""Window functions (Flink's ``streaming.api.functions.windowing``, PyFlink's names).

What a window emits when it fires. ``reduce`` and ``aggregate`` combine each element into the pane as it
arrives (one accumulator per key and window); ``apply`` and ``process`` keep every element and see them all at
once; ``reduce``/``aggregate`` with a ``window_function`` hand the single combined value to that function, with
the key and the window. Each function returns (or yields) its outputs.

    >>> class Count(ProcessWindowFunction):
    ...     def process(self, key, context, elements):
    ...         yield key, context.window().start, len(list(elements))
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from strom.api.functions import RichFunction

if TYPE_CHECKING:
    from strom.api.output_tag import OutputTag
    from strom.api.state import StateDescriptor

__all__ = [
    "AllWindowFunction",
    "KeyedStateStore",
    "ProcessAllWindowFunction",
    "ProcessWindowFunction",
    "WindowFunction",
]

IN = TypeVar("IN")
OUT = TypeVar("OUT")
KEY = TypeVar("KEY")
W = TypeVar("W")
W2 = TypeVar("W2")  # the window type of a nested Context: ``ProcessWindowFunction.Context[TimeWindow]``


class KeyedStateStore(ABC):
    """Keyed state of the current key, scoped to one window (``window_state``) or to none (``global_state``)."""

    @abstractmethod
    def get_state(self, descriptor: StateDescriptor) -> Any:
        """The state of ``descriptor`` (its kind follows the descriptor's)."""


class WindowFunction(RichFunction, Generic[IN, OUT, KEY, W]):
    """``apply(key, window, inputs)``: all elements of a pane (or the one pre-aggregated value)."""

    @abstractmethod
    def apply(self, key: KEY, window: W, inputs: Iterable[IN]) -> Iterable[OUT] | None: ...


class AllWindowFunction(RichFunction, Generic[IN, OUT, W]):
    """``apply(window, inputs)`` of a non-keyed window (``window_all``)."""

    @abstractmethod
    def apply(self, window: W, inputs: Iterable[IN]) -> Iterable[OUT] | None: ...


class _WindowContext(ABC, Generic[W]):
    @abstractmethod
    def window(self) -> W:
        """The window that fires."""

    @abstractmethod
    def current_processing_time(self) -> int: ...

    @abstractmethod
    def current_watermark(self) -> int: ...

    @abstractmethod
    def window_state(self) -> KeyedStateStore:
        """State of the current key for this window only; clear it in ``clear(context)``."""

    @abstractmethod
    def global_state(self) -> KeyedStateStore:
        """State of the current key across all its windows."""

    @abstractmethod
    def output(self, output_tag: OutputTag, value: Any) -> None:
        """Emit ``value`` to the side output ``output_tag``."""


class ProcessWindowFunction(RichFunction, Generic[IN, OUT, KEY, W]):
    """``process(key, context, elements)`` with the window, times and per-window state in ``context``."""

    class Context(_WindowContext[W2]):
        """The window, times, per-window and global state, and side outputs of a firing (PyFlink's name;
        ``ProcessWindowFunction.Context[TimeWindow]`` in annotations, as PyFlink's)."""

    @abstractmethod
    def process(
        self, key: KEY, context: ProcessWindowFunction.Context[W], elements: Iterable[IN]
    ) -> Iterable[OUT] | None: ...

    def clear(self, context: ProcessWindowFunction.Context[W]) -> None:
        """The window expired: delete what was kept in ``context.window_state()``; the default does nothing."""


class ProcessAllWindowFunction(RichFunction, Generic[IN, OUT, W]):
    """``process(context, elements)`` of a non-keyed window."""

    class Context(_WindowContext[W2]):
        """The window, times, state and side outputs of a non-keyed firing (PyFlink's name)."""

    @abstractmethod
    def process(self, context: ProcessAllWindowFunction.Context[W], elements: Iterable[IN]) -> Iterable[OUT] | None: ...

    def clear(self, context: ProcessAllWindowFunction.Context[W]) -> None:
        """The window expired: delete per-window state; the default does nothing."""
