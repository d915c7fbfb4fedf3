"""Hypothesis: tumbling/sliding assignment equals a naive reference; sessions merged through a
MergingWindowSet are disjoint, separated by more than the gap, and match a sort-and-split reference."""

from __future__ import annotations

from collections.abc import Collection
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from windowing_harness import FixedProcessingTime

from strom.api.windowing import EventTimeSessionWindows, SlidingEventTimeWindows, TimeWindow, TumblingEventTimeWindows
from strom.runtime.operators.windowing import MergingWindowSet

pytestmark = pytest.mark.timeout(60)

CTX = FixedProcessingTime(0)
timestamps = st.integers(-(10**12), 10**12)


def naive_windows(t: int, size: int, slide: int, offset: int) -> set[TimeWindow]:
    """Every window [start, start + size) with start ≡ offset (mod slide) that contains t."""
    first = t - size + 1  # the lowest start whose window still contains t
    start = first + (offset - first) % slide  # the first start >= first on the grid
    result = set()
    while start <= t:
        result.add(TimeWindow(start, start + size))
        start += slide
    return result


@st.composite
def sliding_params(draw: st.DrawFn) -> tuple[int, int, int]:
    slide = draw(st.integers(1, 10_000))
    size = draw(st.integers(1, 30 * slide if slide < 300 else 10_000))
    offset = draw(st.integers(-(slide - 1), slide - 1))
    return size, slide, offset


@settings(max_examples=300, deadline=None)
@given(t=timestamps, size=st.integers(1, 10**9), data=st.data())
def test_tumbling_assignment_matches_reference(t: int, size: int, data: st.DataObject) -> None:
    offset = data.draw(st.integers(-(size - 1), size - 1))
    assigned = TumblingEventTimeWindows.of(size, offset).assign_windows("x", t, CTX)
    assert set(assigned) == naive_windows(t, size, size, offset)
    assert len(assigned) == 1 and assigned[0].start <= t <= assigned[0].max_timestamp()


@settings(max_examples=300, deadline=None)
@given(t=timestamps, params=sliding_params())
def test_sliding_assignment_matches_reference(t: int, params: tuple[int, int, int]) -> None:
    size, slide, offset = params
    assigned = SlidingEventTimeWindows.of(size, slide, offset).assign_windows("x", t, CTX)
    assert len(assigned) == len(set(assigned))
    assert set(assigned) == naive_windows(t, size, slide, offset)
    assert [w.start for w in assigned] == sorted((w.start for w in assigned), reverse=True)


@settings(max_examples=200, deadline=None)
@given(gap=st.integers(1, 50), ts=st.lists(st.integers(-500, 500), min_size=1, max_size=40))
def test_session_windows_merged_by_the_set_are_disjoint_and_gapped(gap: int, ts: list[int]) -> None:
    assigner = EventTimeSessionWindows.with_gap(gap)
    window_set = MergingWindowSet(assigner)
    state: dict[TimeWindow, list[int]] = {}  # state window -> elements, as the window operator keeps them

    def merge(
        result: TimeWindow,
        merged: Collection[TimeWindow],
        state_window: TimeWindow,
        merged_states: Collection[TimeWindow],
    ) -> None:
        for source in merged_states:
            state.setdefault(state_window, []).extend(state.pop(source, []))

    for t in ts:
        (window,) = assigner.assign_windows("x", t, CTX)
        actual = window_set.add_window(window, merge)
        state_window = window_set.get_state_window(actual)
        assert state_window is not None and actual.start <= t <= actual.max_timestamp()
        state.setdefault(state_window, []).append(t)
        window_set.validate()

    sessions = sorted(window_set.persist())
    for a, b in pairwise(sessions):
        assert a.end < b.start  # disjoint and not even adjacent
    contents = {w: sorted(state[window_set.get_state_window(w)]) for w in sessions}  # type: ignore[index]
    for a, b in pairwise(sessions):
        assert contents[b][0] - contents[a][-1] > gap  # elements of different sessions lie more than gap apart
    assert sum(len(v) for v in contents.values()) == len(ts)

    # reference: sort, split where consecutive timestamps are more than gap apart
    reference: list[list[int]] = []
    for t in sorted(ts):
        if reference and t - reference[-1][-1] <= gap:
            reference[-1].append(t)
        else:
            reference.append([t])
    assert [TimeWindow(r[0], r[-1] + gap) for r in reference] == sessions
    assert [contents[w] for w in sessions] == reference
