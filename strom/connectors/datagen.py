"""``DataGeneratorSource``: records computed from their index, optionally at a limited rate (Flink's
``DataGeneratorSource`` with a ``GeneratorFunction`` and a ``RateLimiterStrategy``).

``generator_function(i)`` makes record ``i`` for ``i`` in ``0..count-1``. The indices are cut into contiguous
ranges, one split per subtask (as :class:`~strom.connectors.NumberSequenceSource`); a split's payload is the
range still to generate, so a checkpoint stores two numbers and a restored job regenerates exactly the
records after the last one emitted — provided the function is deterministic.

With ``records_per_second`` the total rate across all subtasks is limited: each reader produces at
``records_per_second / parallelism``. The reader never sleeps; ahead of schedule it returns an empty batch
and the task waits briefly, staying responsive to checkpoints and cancellation.

    env.from_source(DataGeneratorSource(lambda i: (i % 10, i), 1_000_000, records_per_second=5_000))
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from strom.api.source import Source, SourceReader, SourceReaderContext, SourceSplit
from strom.connectors.number_sequence import IndexRangeReader, contiguous_range_splits
from strom.exceptions import InvalidProgramError

__all__ = ["DataGeneratorSource"]

T = TypeVar("T")


class DataGeneratorSource(Source[T], Generic[T]):
    """``count`` records ``generator_function(0) .. generator_function(count - 1)``, optionally rate-limited.

    ``clock`` (seconds, monotonic; default :func:`time.monotonic`) is for tests; it must pickle, since the
    source travels to the TaskManagers.
    """

    def __init__(
        self,
        generator_function: Callable[[int], T],
        count: int,
        records_per_second: float | None = None,
        *,
        clock: Callable[[], float] | None = None,
    ) -> None:
        if not callable(generator_function):
            raise InvalidProgramError(
                "DataGeneratorSource expects a generator_function that maps an index to a record; "
                f"got a {type(generator_function).__name__}; hint: DataGeneratorSource(lambda i: f'event-{{i}}', 100)"
            )
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise InvalidProgramError(
                f"DataGeneratorSource expects count to be an int ≥ 0; got {count!r}; "
                "hint: count is the total number of records, e.g. 1_000_000"
            )
        if records_per_second is not None and (
            isinstance(records_per_second, bool)
            or not isinstance(records_per_second, int | float)
            or not math.isfinite(records_per_second)
            or records_per_second <= 0
        ):
            raise InvalidProgramError(
                f"DataGeneratorSource expects records_per_second > 0 or None; got {records_per_second!r}; "
                "hint: None generates as fast as possible"
            )
        if clock is not None and not callable(clock):
            raise InvalidProgramError(
                f"DataGeneratorSource expects clock to be a callable returning seconds; got {clock!r}; "
                "hint: leave it out to use time.monotonic"
            )
        self.generator_function = generator_function
        self.count = count
        self.records_per_second = None if records_per_second is None else float(records_per_second)
        self.clock = clock

    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        return contiguous_range_splits("datagen", 0, self.count, parallelism)

    def create_reader(self, context: SourceReaderContext) -> SourceReader[T]:
        rate = None if self.records_per_second is None else self.records_per_second / max(context.parallelism, 1)
        return _GeneratorReader(
            self.generator_function, context, rate, self.clock if self.clock is not None else time.monotonic
        )


class _GeneratorReader(IndexRangeReader[Any]):
    def __init__(
        self,
        generator_function: Callable[[int], Any],
        context: SourceReaderContext,
        rate: float | None,
        clock: Callable[[], float],
    ) -> None:
        super().__init__(context)
        self._fn = generator_function
        self._rate = rate
        self._clock = clock
        self._started: float | None = None
        self._emitted = 0

    def produce(self, lo: int, end: int) -> list[Any]:
        fn = self._fn
        out = []
        for i in range(lo, end):
            try:
                out.append(fn(i))
            except Exception as exc:
                exc.add_note(f"DataGeneratorSource: generator_function failed for index {i}")
                raise
        return out

    def available(self) -> int:
        """Records allowed now: the schedule starts with the first poll and grants one record right away."""
        if self._rate is None:
            return self.batch_size
        now = self._clock()
        if self._started is None:
            self._started = now
        allowed = math.floor((now - self._started) * self._rate + 1e-9) + 1  # 1e-9: float noise
        return allowed - self._emitted

    def emitted(self, n: int) -> None:
        self._emitted += n
