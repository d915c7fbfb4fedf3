"""The AsyncWaitOperator driven by the one-input harness (its event loop is real; there is no task mailbox, so
outcomes are handled when the operator waits: at full capacity and in ``finish``)."""

from __future__ import annotations

import asyncio
import functools
from typing import Any

import pytest
from operator_harness import OperatorHarness, Record, WatermarkOut

from strom.api.async_function import AsyncFunction
from strom.api.async_retry_predicates import empty_result_predicate, exception_type_predicate
from strom.api.async_retry_strategies import NO_RETRY_STRATEGY, AsyncRetryStrategy
from strom.exceptions import UserFunctionError
from strom.runtime.operators.async_wait import AsyncWaitOperator


class Double(AsyncFunction[int, int]):
    async def async_invoke(self, value: int) -> list[int]:
        await asyncio.sleep(0.001 * (value % 3))
        return [value * 2]


class Never(AsyncFunction[int, int]):
    """Never completes (until cancelled)."""

    async def async_invoke(self, value: int) -> list[int]:
        await asyncio.Event().wait()
        return []


def harness(fn: AsyncFunction[Any, Any], *, ordered: bool = True, capacity: int = 10, timeout_ms: int = 0,
            strategy: AsyncRetryStrategy[Any] = NO_RETRY_STRATEGY) -> OperatorHarness:  # fmt: skip
    op = AsyncWaitOperator(fn, timeout_ms=timeout_ms, capacity=capacity, ordered=ordered, retry_strategy=strategy)
    return OperatorHarness(op)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("ordered", [True, False])
def test_results_keep_their_input_timestamps_and_watermarks_follow_earlier_records(ordered: bool) -> None:
    h = harness(Double(), ordered=ordered).open()
    try:
        h.process_elements([(1, 100), (2, 200)])
        h.process_watermark(250)
        h.process_elements([(3, 300)])
        h.operator.finish()
        events = h.extract_output()
    finally:
        h.operator.close()
    wm = events.index(WatermarkOut(250))
    assert sorted(events[:wm], key=repr) == [Record(2, 100), Record(4, 200)]
    assert events[wm + 1 :] == [Record(6, 300)]
    if ordered:
        assert events[:wm] == [Record(2, 100), Record(4, 200)]


@pytest.mark.timeout(30)
def test_snapshot_holds_the_elements_in_flight_and_a_restored_operator_issues_them_again() -> None:
    h = harness(Never(), capacity=10).open()
    try:
        h.process_elements([(1, 10), (2, 20)])
        h.process_watermark(25)
        h.process_elements([(3, 30)])
        snapshot = h.snapshot()
        assert h.extract_output() == []
    finally:
        h.operator.close()
    restored = harness(Double(), capacity=10).open(restore=snapshot)
    try:
        restored.operator.finish()
        events = restored.extract_output()
    finally:
        restored.operator.close()
    assert events == [Record(2, 10), Record(4, 20), WatermarkOut(25), Record(6, 30)]


@pytest.mark.timeout(30)
def test_a_result_that_is_not_a_list_names_the_operator_and_record() -> None:
    class ReturnsNone(AsyncFunction[int, int]):
        async def async_invoke(self, value: int) -> Any:
            return None

    h = harness(ReturnsNone()).open()
    try:
        # the result is checked when the operator collects it: at the next record or mail, or at the latest in
        # finish() — which one depends on how fast the function answered, so both calls are inside
        with pytest.raises(UserFunctionError, match=r"return a list of results; got None.*'the-record'"):
            h.process_element("the-record")
            h.operator.finish()
    finally:
        h.operator.close()


@pytest.mark.timeout(30)
def test_exponential_backoff_delays_follow_the_attempt_number() -> None:
    s = AsyncRetryStrategy.exponential_backoff(4, 10, 50, 2.0, None, None)
    assert [s.get_backoff_time_millis(n) for n in (1, 2, 3, 4)] == [10, 20, 40, 50]
    assert s.can_retry(4) and not s.can_retry(5)
    fixed = AsyncRetryStrategy.fixed_delay(2, 7, None, None)
    assert fixed.get_backoff_time_millis(2) == 7 and fixed.can_retry(2) and not fixed.can_retry(3)
    assert not AsyncRetryStrategy.no_restart().can_retry(1)


class TimesOutOnce(AsyncFunction[int, str]):
    """Raises its own TimeoutError on a record's first attempt, answers empty on the second."""

    def __init__(self) -> None:
        self.attempts: dict[int, int] = {}

    async def async_invoke(self, value: int) -> list[str]:
        n = self.attempts[value] = self.attempts.get(value, 0) + 1
        if n == 1:
            raise TimeoutError("the remote service timed out")
        return [] if n == 2 else [f"{value}@{n}"]


@pytest.mark.timeout(30)
def test_the_users_own_timeout_error_is_retried_not_taken_for_the_operators_timeout() -> None:
    retry_timeouts = functools.partial(exception_type_predicate, expected_error_type=TimeoutError)
    strategy = AsyncRetryStrategy.fixed_delay(
        max_attempts=5,
        backoff_time_millis=1,
        result_predicate=empty_result_predicate,
        exception_predicate=retry_timeouts,
    )
    h = harness(TimesOutOnce(), timeout_ms=30_000, strategy=strategy).open()
    try:
        h.process_element(1)
        h.process_element(2)
        h.operator.finish()
        assert h.records() == ["1@3", "2@3"]  # attempt 1 raised, attempt 2 was empty, attempt 3 answered
    finally:
        h.operator.close()
