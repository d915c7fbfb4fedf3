"""Ports Flink's TimeWindowTest; plus GlobalWindow, TimestampedValue and the duration arguments."""

from __future__ import annotations

import pickle
from datetime import timedelta

import pytest

from strom.api._time import java_rem, to_millis
from strom.api.windowing import GlobalWindow, TimestampedValue, TimeWindow
from strom.exceptions import InvalidProgramError

pytestmark = pytest.mark.timeout(60)

start = TimeWindow.get_window_start_with_offset


def test_get_window_start_with_offset() -> None:
    # [-21, -14), [-14, -7), [-7, 0), [0, 7), [7, 14), [14, 21)...
    for ts, expected in [(-8, -14), (-7, -7), (-6, -7), (-1, -7), (1, 0), (6, 0), (7, 7), (8, 7)]:
        assert start(ts, 0, 7) == expected
    # [-11, -4), [-4, 3), [3, 10), [10, 17)...
    for ts, expected in [(-10, -11), (-9, -11), (-3, -4), (-2, -4), (-1, -4), (1, -4), (2, -4), (3, 3), (9, 3)]:
        assert start(ts, 3, 7) == expected
    assert start(10, 3, 7) == 10
    # [-16, -9), [-9, -2), [-2, 5), [5, 12), [12, 19)...
    cases = [(-12, -16), (-7, -9), (-4, -9), (-3, -9), (2, -2), (-1, -2), (1, -2), (-2, -2), (3, -2), (4, -2)]
    for ts, expected in [*cases, (7, 5), (12, 12)]:
        assert start(ts, -2, 7) == expected
    # for GMT+08:00
    assert start(1470902048450, -8 * 3_600_000, 86_400_000) == 1470844800000


def test_intersect() -> None:
    def intersects(w0: TimeWindow, w1: TimeWindow) -> bool:
        assert w0.intersects(w1) == w1.intersects(w0)
        return w0.intersects(w1)

    window = TimeWindow(10, 20)
    assert window.intersects(window)  # must intersect with itself
    assert intersects(window, TimeWindow(20, 30))  # windows are next to each other
    assert not intersects(window, TimeWindow(21, 30))  # there is distance between the windows
    assert intersects(window, TimeWindow(19, 22))  # overlaps by one


def test_time_window_value_semantics() -> None:
    w = TimeWindow(0, 5)
    assert w.max_timestamp() == 4
    assert w == TimeWindow(0, 5) and hash(w) == hash(TimeWindow(0, 5))
    assert sorted([TimeWindow(5, 9), TimeWindow(0, 9), TimeWindow(0, 5)]) == [
        TimeWindow(0, 5),
        TimeWindow(0, 9),
        TimeWindow(5, 9),
    ]
    assert w.cover(TimeWindow(-3, 2)) == TimeWindow(-3, 5)
    assert pickle.loads(pickle.dumps(w)) == w
    with pytest.raises(AttributeError):
        w.start = 1  # type: ignore[misc]


def test_merge_windows_reports_runs_in_order_of_start() -> None:
    calls: list[tuple[list[TimeWindow], TimeWindow]] = []
    windows = [TimeWindow(5, 6), TimeWindow(0, 1), TimeWindow(1, 2), TimeWindow(9, 10), TimeWindow(1, 2)]
    TimeWindow.merge_windows(windows, lambda merged, result: calls.append((list(merged), result)))
    assert calls == [([TimeWindow(0, 1), TimeWindow(1, 2)], TimeWindow(0, 2))]


def test_global_window_is_a_singleton() -> None:
    g = GlobalWindow.get()
    assert g is GlobalWindow() and g == GlobalWindow.get() and hash(g) == 0
    assert g.max_timestamp() == 2**63 - 1
    assert pickle.loads(pickle.dumps(g)) is g
    assert g != TimeWindow(0, 1)


def test_timestamped_value() -> None:
    assert TimestampedValue("a", 5).has_timestamp() and TimestampedValue("a", 5).get_timestamp() == 5
    no_ts = TimestampedValue("a")
    assert not no_ts.has_timestamp() and no_ts.get_value() == "a"
    with pytest.raises(ValueError, match="without one"):
        no_ts.get_timestamp()


def test_durations_convert_like_java() -> None:
    assert to_millis(timedelta(minutes=1), "size") == 60_000
    assert to_millis(timedelta(microseconds=-1500), "size") == -1  # Duration.toMillis truncates toward zero
    assert to_millis(-5, "size") == -5
    with pytest.raises(InvalidProgramError, match=r"expected an int of milliseconds .*; got a 'float'"):
        to_millis(1.5, "size")
    with pytest.raises(InvalidProgramError):
        to_millis(True, "size")
    assert (java_rem(-7, 5), java_rem(7, -5), java_rem(7, 5)) == (-2, 2, 2)
