"""``JobLogBuffers``: per job a bounded buffer of forwarded log records, read with a cursor."""

from __future__ import annotations

import logging

import pytest

from strom.runtime.dispatcher import job_logs
from strom.runtime.dispatcher.job_logs import JobLogBuffers


def test_a_cursor_reads_each_record_once_and_a_level_skips_lower_ones() -> None:
    b = JobLogBuffers()
    for i in range(5):
        b.add("job", "tm-1", 1000 + i, logging.INFO if i % 2 else logging.WARNING, "user", f"line {i}")
    records, cursor, dropped = b.read("job", 0)
    assert [r.message for r in records] == [f"line {i}" for i in range(5)] and (cursor, dropped) == (5, 0)
    assert b.read("job", cursor) == ([], 5, 0)
    warnings, cursor, _ = b.read("job", 0, logging.WARNING)
    assert [r.seq for r in warnings] == [0, 2, 4] and cursor == 5  # skipped records still move the cursor
    b.add("job", "tm-2", 2000, logging.ERROR, "user", "late")
    assert [r.message for r in b.read("job", 5)[0]] == ["late"]
    assert b.read("other job", 3) == ([], 3, 0)


def test_the_buffers_are_bounded_and_say_what_was_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(job_logs, "MAX_RECORDS_PER_JOB", 3)
    monkeypatch.setattr(job_logs, "MAX_JOBS", 2)
    b = JobLogBuffers()
    for i in range(5):
        b.add("a", "tm", 0, logging.INFO, "x", str(i))
    records, cursor, dropped = b.read("a", 0)
    assert [r.message for r in records] == ["2", "3", "4"] and (cursor, dropped) == (5, 2)
    page, cursor, _ = b.read("a", 1, limit=1)
    assert [r.message for r in page] == ["2"] and cursor == 3  # a page: the cursor stops after it
    b.add("b", "tm", 0, logging.INFO, "x", "b")
    b.add("c", "tm", 0, logging.INFO, "x", "c")  # a third job: the oldest job's buffer goes
    assert b.read("a", 0)[0] == [] and [r.message for r in b.read("c", 0)[0]] == ["c"]
