"""PyFlink's user-defined function classes (``strom.table.udf``): abstract methods as PyFlink declares them, the
optional ``retract``/``merge`` with a clear error, ``open`` before the first call, async and pandas functions."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from strom.table import DataTypes
from strom.table.errors import TableException
from strom.table.pandas_udf import PandasAggregateFunction
from strom.table.udf import (
    AggregateFunction,
    AsyncScalarFunction,
    ScalarFunction,
    TableAggregateFunction,
    TableFunction,
    lookup,
    udaf,
    udf,
    udtaf,
)


class Count(AggregateFunction):
    def create_accumulator(self) -> list[int]:
        return [0]

    def accumulate(self, accumulator: list[int], *args: Any) -> None:
        accumulator[0] += 1

    def get_value(self, accumulator: list[int]) -> int:
        return accumulator[0]


def test_the_working_methods_are_abstract_as_in_pyflink() -> None:
    for base in (ScalarFunction, TableFunction, AggregateFunction, TableAggregateFunction, AsyncScalarFunction):
        with pytest.raises(TypeError, match="abstract"):
            base()  # type: ignore[abstract]

    class NoValue(AggregateFunction):
        def create_accumulator(self) -> Any:
            return []

        def accumulate(self, accumulator: Any, *args: Any) -> None:
            accumulator.append(args)

    with pytest.raises(TypeError, match="get_value"):
        NoValue()  # type: ignore[abstract]


def test_retract_and_merge_are_optional_and_say_what_needs_them() -> None:
    count = Count()
    with pytest.raises(TableException, match=r"Count\.retract: expected it implemented.*updating input"):
        count.retract([1], 5)
    with pytest.raises(TableException, match=r"Count\.merge: expected it implemented.*session windows"):
        count.merge([1], [[2]])


def test_a_table_aggregate_is_an_aggregate_call_of_its_emitted_rows() -> None:
    class Top1(TableAggregateFunction):
        def create_accumulator(self) -> list[int]:
            return [0]

        def accumulate(self, accumulator: list[int], value: int) -> None:
            accumulator[0] = max(accumulator[0], value)

        def emit_value(self, accumulator: list[int]) -> Any:
            yield accumulator[0]

    wrapper = udtaf(Top1(), result_type=DataTypes.ROW([DataTypes.FIELD("v", DataTypes.INT())]))
    assert wrapper.table_aggregate
    acc = wrapper.aggregate.create_accumulator()
    wrapper.aggregate.accumulate(acc, 3)
    assert wrapper.aggregate.get_value(acc) == ((3,),)


def test_open_is_called_once_before_the_first_eval() -> None:
    class Prefixed(ScalarFunction):
        def open(self, function_context: Any) -> None:
            self.prefix = function_context.get_job_parameter("prefix", "p-")

        def eval(self, value: str) -> str:
            return self.prefix + value

    call = lookup(udf(Prefixed(), result_type=DataTypes.STRING())._name)
    assert call is not None and call.func("a") == "p-a" and call.func("b") == "p-b"


def test_async_functions_are_awaited() -> None:
    class Lookup(AsyncScalarFunction):
        async def eval(self, key: str) -> str:
            await asyncio.sleep(0)
            return f"v-{key}"

    @udf(result_type=DataTypes.STRING())
    async def doubled(key: str) -> str:
        return key * 2

    assert udf(Lookup(), result_type=DataTypes.STRING()).func("k") == "v-k"
    assert doubled.func("ab") == "abab"


def test_pandas_functions_get_series() -> None:
    @udf(result_type=DataTypes.BIGINT(), func_type="pandas")
    def plus(a: Any, b: Any) -> Any:
        assert type(a).__name__ == "Series"
        return a + b

    assert plus.func(2, 3) == 5 and type(plus.func(2, 3)) is int

    @udaf(result_type=DataTypes.DOUBLE(), func_type="pandas")
    def mean(v: Any) -> Any:
        return v.mean()

    function = mean.aggregate
    assert isinstance(function, PandasAggregateFunction)
    acc = function.create_accumulator()
    for v in (1.0, 2.0, 6.0):
        function.accumulate(acc, v)
    assert function.get_value(acc) == 3.0
    function.retract(acc, 6.0)
    other = function.create_accumulator()
    function.accumulate(other, 4.5)
    function.merge(acc, [other])
    assert function.get_value(acc) == 2.5 and type(function.get_value(acc)) is float
