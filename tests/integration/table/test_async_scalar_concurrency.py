"""Async scalar functions run concurrently, at most ``table.exec.async-scalar.max-concurrent-operations`` calls in
flight on the subtask's event loop, and each row keeps its own result, in input order (Flink's ordered async Calc)."""

from __future__ import annotations

import asyncio

import pytest

from strom.table import DataTypes, EnvironmentSettings, TableEnvironment
from strom.table.udf import AsyncScalarFunction, udf

_VALUES = ", ".join(f"({i})" for i in range(1, 13))


class _Tracked(AsyncScalarFunction):
    """Returns its argument and the most calls it saw in flight at once; later rows finish first."""

    def open(self, function_context: object) -> None:
        self.in_flight = 0
        self.peak = 0

    async def eval(self, x: int) -> str:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        await asyncio.sleep(0.02 * (13 - x))
        self.in_flight -= 1
        return f"{x}:{self.peak}"


def _run(capacity: int | None) -> list[tuple[int, str]]:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    if capacity is not None:
        t_env.get_config().set("table.exec.async-scalar.max-concurrent-operations", str(capacity))
    t_env.create_temporary_function("tracked", udf(_Tracked(), result_type=DataTypes.STRING()))
    query = f"SELECT x, tracked(x) AS r FROM (VALUES {_VALUES}) AS t(x) WHERE x > 0"
    return [tuple(r._values) for r in t_env.execute_sql(query).collect()]  # type: ignore[misc]


@pytest.mark.parametrize(("capacity", "expected_peak"), [(3, 3), (1, 1), (None, 10)])
def test_async_calls_concurrent_up_to_the_capacity_in_input_order(capacity: int | None, expected_peak: int) -> None:
    rows = _run(capacity)
    assert [x for x, _ in rows] == list(range(1, 13))
    assert all(r.split(":")[0] == str(x) for x, r in rows)  # each row its own result
    assert max(int(r.split(":")[1]) for _, r in rows) == expected_peak
