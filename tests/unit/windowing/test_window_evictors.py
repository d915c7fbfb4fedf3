"""Evictor semantics of Flink's CountEvictor, TimeEvictor and DeltaEvictor (EvictingWindowOperatorTest's cases)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from windowing_harness import FixedProcessingTime

from strom.api.windowing import CountEvictor, DeltaEvictor, DeltaFunction, GlobalWindow, TimeEvictor, TimestampedValue
from strom.exceptions import InvalidProgramError

pytestmark = pytest.mark.timeout(60)

CTX = FixedProcessingTime()
G = GlobalWindow.get()


def pane(*stamped: tuple[int, int | None]) -> list[TimestampedValue[int]]:
    return [TimestampedValue(v, ts) for v, ts in stamped]


def values(elements: list[TimestampedValue[int]]) -> list[int]:
    return [e.get_value() for e in elements]


def test_count_evictor_keeps_the_last_elements_before() -> None:
    elements = pane((1, 1), (2, 2), (3, 3), (4, 4), (5, 5))
    evictor = CountEvictor.of(3)
    evictor.evict_after(elements, len(elements), G, CTX)
    assert values(elements) == [1, 2, 3, 4, 5]  # eviction is before the window function by default
    evictor.evict_before(elements, len(elements), G, CTX)
    assert values(elements) == [3, 4, 5]
    evictor.evict_before(elements, len(elements), G, CTX)
    assert values(elements) == [3, 4, 5]


def test_count_evictor_after() -> None:
    elements = pane((1, 1), (2, 2), (3, 3))
    evictor = CountEvictor.of(1, do_evict_after=True)
    evictor.evict_before(elements, 3, G, CTX)
    assert values(elements) == [1, 2, 3]
    evictor.evict_after(elements, 3, G, CTX)
    assert values(elements) == [3]
    assert repr(evictor) == "CountEvictor(1)"


def test_time_evictor_keeps_the_window_size_before_the_newest_timestamp() -> None:
    elements = pane((1, 1000), (2, 4000), (3, 2000), (4, 5000), (5, 3000))
    evictor = TimeEvictor.of(timedelta(seconds=3))
    evictor.evict_before(elements, len(elements), G, CTX)
    # cutoff = max(ts) - 3000 = 2000; timestamps <= cutoff go, wherever they are
    assert values(elements) == [2, 4, 5]
    assert evictor.get_window_size() == 3000


def test_time_evictor_ignores_panes_without_timestamps() -> None:
    elements = pane((1, None), (2, None))
    TimeEvictor.of(10).evict_before(elements, 2, G, CTX)
    assert values(elements) == [1, 2]
    after = pane((1, 0), (2, 100))
    TimeEvictor.of(10, do_evict_after=True).evict_before(after, 2, G, CTX)
    assert values(after) == [1, 2]
    TimeEvictor.of(10, do_evict_after=True).evict_after(after, 2, G, CTX)
    assert values(after) == [2]


def test_delta_evictor_removes_every_far_element() -> None:
    elements = pane((1, 1), (9, 2), (2, 3), (8, 4), (10, 5))
    evictor = DeltaEvictor.of(5.0, lambda old, new: abs(new - old))
    evictor.evict_before(elements, len(elements), G, CTX)
    # the delta to the last element (10) decides; the scan does not stop at the first close element
    assert values(elements) == [9, 8, 10]


def test_delta_evictor_with_delta_function_and_after() -> None:
    class Distance(DeltaFunction[int]):
        def get_delta(self, old_data_point: int, new_data_point: int) -> float:
            return float(new_data_point - old_data_point)

    elements = pane((1, 1), (4, 2), (5, 3))
    evictor = DeltaEvictor.of(3, Distance(), do_evict_after=True)
    evictor.evict_before(elements, 3, G, CTX)
    assert values(elements) == [1, 4, 5]
    evictor.evict_after(elements, 3, G, CTX)
    assert values(elements) == [4, 5]
    empty: list[TimestampedValue[int]] = []
    evictor.evict_after(empty, 0, G, CTX)
    assert empty == []


def test_evictor_argument_validation() -> None:
    with pytest.raises(InvalidProgramError, match="expected an int"):
        CountEvictor.of("3")  # type: ignore[arg-type]
    with pytest.raises(InvalidProgramError, match="do_evict_after to be a bool"):
        CountEvictor.of(3, 1)  # type: ignore[arg-type]
    with pytest.raises(InvalidProgramError, match="numeric threshold"):
        DeltaEvictor.of("x", abs)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="DeltaFunction"):
        DeltaEvictor.of(1.0, 3)
