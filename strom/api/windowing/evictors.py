"""Evictors: drop elements from a pane before or after the window function (Flink's
``streaming.api.windowing.evictors``).

An evictor receives the pane's elements as a ``list`` of :class:`TimestampedValue` and removes
elements from it in place (Flink removes them through the iterator). ``size`` is the number of
elements in the pane. ``do_evict_after`` chooses whether eviction happens after the window function
instead of before it::

    CountEvictor.of(100)                                   # keep the last 100 elements
    TimeEvictor.of(timedelta(seconds=10))                  # keep the last 10 s (by the newest timestamp)
    DeltaEvictor.of(5.0, lambda old, new: new - old)       # drop elements too far from the newest one
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar

from strom.api._time import LONG_MIN, to_millis
from strom.api.functions import Function, as_callable
from strom.api.windowing.windows import TimestampedValue, Window
from strom.exceptions import InvalidProgramError

__all__ = ["CountEvictor", "DeltaEvictor", "DeltaFunction", "Evictor", "EvictorContext", "TimeEvictor"]

T = TypeVar("T")
W = TypeVar("W", bound=Window)


class EvictorContext(Protocol):
    """What an evictor may ask the operator (Flink's ``Evictor.EvictorContext``, without the metric group)."""

    def get_current_processing_time(self) -> int: ...

    def get_current_watermark(self) -> int: ...


class Evictor(ABC, Generic[T, W]):
    """Removes elements from a pane (Flink's ``Evictor``); each method edits ``elements`` in place."""

    @abstractmethod
    def evict_before(
        self, elements: list[TimestampedValue[T]], size: int, window: W, evictor_context: EvictorContext
    ) -> None:
        """Optionally evict elements; called before the window function."""

    @abstractmethod
    def evict_after(
        self, elements: list[TimestampedValue[T]], size: int, window: W, evictor_context: EvictorContext
    ) -> None:
        """Optionally evict elements; called after the window function."""


class _BeforeOrAfterEvictor(Evictor[T, W]):
    def __init__(self, do_evict_after: bool) -> None:
        if not isinstance(do_evict_after, bool):
            raise InvalidProgramError(
                f"{type(self).__name__} expected do_evict_after to be a bool; got {do_evict_after!r:.40}"
            )
        self.do_evict_after = do_evict_after

    def evict_before(
        self, elements: list[TimestampedValue[T]], size: int, window: W, evictor_context: EvictorContext
    ) -> None:
        if not self.do_evict_after:
            self._evict(elements, size, evictor_context)

    def evict_after(
        self, elements: list[TimestampedValue[T]], size: int, window: W, evictor_context: EvictorContext
    ) -> None:
        if self.do_evict_after:
            self._evict(elements, size, evictor_context)

    @abstractmethod
    def _evict(self, elements: list[TimestampedValue[T]], size: int, evictor_context: EvictorContext) -> None: ...


def _int_arg(value: object, what: str, hint: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidProgramError(f"{what} expected an int; got a {type(value).__name__!r}; hint: {hint}")
    return value


class CountEvictor(_BeforeOrAfterEvictor[Any, W]):
    """Keeps the last ``max_count`` elements of a pane: evicts the first ``size - max_count`` (Flink's
    ``CountEvictor``)."""

    def __init__(self, max_count: int, do_evict_after: bool = False) -> None:
        super().__init__(do_evict_after)
        self.max_count = _int_arg(max_count, "CountEvictor", "CountEvictor.of(100)")

    @staticmethod
    def of(max_count: int, do_evict_after: bool = False) -> CountEvictor[Any]:
        return CountEvictor(max_count, do_evict_after)

    def _evict(self, elements: list[TimestampedValue[Any]], size: int, evictor_context: EvictorContext) -> None:
        if size <= self.max_count:
            return
        del elements[: size - self.max_count]

    def __repr__(self) -> str:
        return f"CountEvictor({self.max_count})"


class TimeEvictor(_BeforeOrAfterEvictor[Any, W]):
    """Keeps the elements of the last ``window_size`` milliseconds, measured back from the newest
    element's timestamp: evicts every element with ``timestamp <= max_timestamp - window_size`` (Flink's
    ``TimeEvictor``). Does nothing when the first element carries no timestamp."""

    def __init__(self, window_size: Any, do_evict_after: bool = False) -> None:
        super().__init__(do_evict_after)
        self.window_size = to_millis(window_size, "TimeEvictor window size")

    @staticmethod
    def of(window_size: Any, do_evict_after: bool = False) -> TimeEvictor[Any]:
        """``window_size``: an int of milliseconds or a ``timedelta``."""
        return TimeEvictor(window_size, do_evict_after)

    def get_window_size(self) -> int:
        return self.window_size

    def _evict(self, elements: list[TimestampedValue[Any]], size: int, evictor_context: EvictorContext) -> None:
        if not elements or not elements[0].has_timestamp():
            return
        current_time = LONG_MIN
        for record in elements:
            current_time = max(current_time, record.get_timestamp())
        evict_cutoff = current_time - self.window_size
        elements[:] = [record for record in elements if record.get_timestamp() > evict_cutoff]

    def __repr__(self) -> str:
        return f"TimeEvictor({self.window_size})"


class DeltaFunction(Function, Generic[T]):
    """The distance between two data points (Flink's ``DeltaFunction``); a plain callable
    ``(old, new) -> float`` works too."""

    @abstractmethod
    def get_delta(self, old_data_point: T, new_data_point: T) -> float: ...


class DeltaEvictor(_BeforeOrAfterEvictor[T, W]):
    """Evicts every element whose delta to the *last* element of the pane is ``>= threshold`` (Flink's
    ``DeltaEvictor``; the scan does not stop at the first close element)."""

    def __init__(self, threshold: float, delta_function: Any, do_evict_after: bool = False) -> None:
        super().__init__(do_evict_after)
        if isinstance(threshold, bool) or not isinstance(threshold, int | float):
            raise InvalidProgramError(
                f"DeltaEvictor expected a numeric threshold; got a {type(threshold).__name__!r}; "
                "hint: DeltaEvictor.of(5.0, lambda old, new: abs(new - old))"
            )
        self.threshold = float(threshold)
        self.delta_function = delta_function
        self._get_delta: Callable[[T, T], float] = as_callable(
            delta_function, DeltaFunction, "get_delta", "DeltaEvictor"
        )

    @staticmethod
    def of(threshold: float, delta_function: Any, do_evict_after: bool = False) -> DeltaEvictor[Any, Any]:
        return DeltaEvictor(threshold, delta_function, do_evict_after)

    def _evict(self, elements: list[TimestampedValue[T]], size: int, evictor_context: EvictorContext) -> None:
        if not elements:
            return  # Flink's Iterables.getLast would fail; the operator never evicts an empty pane
        last_value = elements[-1].get_value()
        elements[:] = [e for e in elements if self._get_delta(e.get_value(), last_value) < self.threshold]

    def __repr__(self) -> str:
        return f"DeltaEvictor({self.delta_function!r}, {self.threshold})"
