"""The combined event time of a two-input operator (Flink's ``IndexedCombinedWatermarkStatus`` rules)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from strom.api.eventtime import LONG_MIN
from strom.runtime.watermark.combined_watermark_status import IndexedCombinedWatermarkStatus

pytestmark = pytest.mark.timeout(30)


def test_the_combined_watermark_is_the_minimum_of_the_inputs_and_only_rises() -> None:
    c = IndexedCombinedWatermarkStatus(2)
    assert c.combined_watermark == LONG_MIN
    assert not c.update_watermark(0, 10)  # input 2 still at LONG_MIN
    assert c.update_watermark(1, 7) and c.combined_watermark == 7
    assert c.update_watermark(1, 12) and c.combined_watermark == 10
    assert not c.update_watermark(0, 9)  # an input going back never lowers the combined watermark
    assert c.combined_watermark == 10


def test_idle_inputs_are_left_out_and_all_idle_is_idle() -> None:
    c = IndexedCombinedWatermarkStatus(2)
    c.update_watermark(0, 100)
    assert c.update_status(1, idle=True) and c.combined_watermark == 100 and not c.idle
    assert not c.update_status(0, idle=True) and c.idle
    assert not c.update_status(1, idle=False)  # back at LONG_MIN: no rise
    assert not c.idle
    with pytest.raises(ValueError, match="idle input 1"):
        c.update_watermark(0, 200)


@given(st.lists(st.tuples(st.integers(0, 1), st.booleans(), st.integers(-50, 50)), max_size=40))
def test_the_combined_watermark_is_the_running_maximum_of_the_active_inputs_minimum(
    steps: list[tuple[int, bool, int]],
) -> None:
    c = IndexedCombinedWatermarkStatus(2)
    idle = [False, False]
    marks = [LONG_MIN, LONG_MIN]
    expected = LONG_MIN
    for index, status_step, value in steps:
        if status_step:
            idle[index] = not idle[index]
            rose = c.update_status(index, idle=idle[index])
        elif not idle[index]:
            marks[index] = value
            rose = c.update_watermark(index, value)
        else:
            continue
        active = [m for m, i in zip(marks, idle, strict=True) if not i]
        before = expected
        if active:
            expected = max(expected, min(active))
        assert (c.combined_watermark, c.idle, rose) == (expected, not active, expected > before)
