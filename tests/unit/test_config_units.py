"""Flink's duration and memory-size notation: what the reference prints reads back as the same value."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from strom.config_units import format_duration, format_memory_size, millis, parse_duration, parse_memory_size


@given(st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=10_000)))
def test_a_formatted_duration_parses_back_to_itself(duration: timedelta) -> None:
    assert parse_duration(format_duration(duration)) == duration


@given(st.integers(min_value=0, max_value=1 << 50))
def test_a_formatted_memory_size_parses_back_to_itself(size: int) -> None:
    assert parse_memory_size(format_memory_size(size)) == size


@pytest.mark.parametrize(
    ("duration", "text"),
    [
        (timedelta(0), "0 ms"),
        (timedelta(milliseconds=1500), "1500 ms"),
        (timedelta(hours=2), "2 h"),
        (timedelta(seconds=90), "90 s"),
        (timedelta(days=1), "1 d"),
        (timedelta(microseconds=5), "5 us"),
    ],
)
def test_a_duration_is_written_in_its_largest_exact_unit(duration: timedelta, text: str) -> None:
    assert format_duration(duration) == text


@pytest.mark.parametrize("text", ["", " ", "s", "1.5 s", "-1 s", "10 parsecs", "1 s 2 ms", "PT10S"])
def test_durations_outside_flinks_notation_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match=r"whole number|not a time unit"):
        parse_duration(text)


@pytest.mark.parametrize("text", ["", "kb", "1.5 mb", "-1", "10 kib", "1 mb 2 kb"])
def test_memory_sizes_outside_flinks_notation_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match=r"whole number|not a memory unit"):
        parse_memory_size(text)


def test_millis_floors_like_javas_duration_to_millis() -> None:
    assert (millis(timedelta(microseconds=1999)), millis(timedelta(seconds=-1, microseconds=500))) == (1, -1000)
