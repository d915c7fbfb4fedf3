"""``@udaf``: a PyFlink ``AggregateFunction`` as an aggregate call of the ``GeneratedAggsHandle`` (accumulate,
retract, merge, get_value), its name carrying the function through pickling, and the API's errors."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from strom.api.row import Row
from strom.table import DataTypes
from strom.table.errors import ValidationException
from strom.table.functions.aggfunctions import UserAggregateName
from strom.table.functions.aggregate_functions import resolve_aggregate
from strom.table.runtime.aggs_handle import AggCall, GeneratedAggsHandle
from strom.table.udf import AggregateFunction, aggregate_function, register, udaf


class WeightedSum(AggregateFunction):
    def create_accumulator(self) -> list[int]:
        return [0]

    def accumulate(self, accumulator: list[int], value: int, weight: int) -> None:
        accumulator[0] += value * weight

    def retract(self, accumulator: list[int], value: int, weight: int) -> None:
        accumulator[0] -= value * weight

    def merge(self, accumulator: list[int], accumulators: Any) -> None:
        for other in accumulators:
            accumulator[0] += other[0]

    def get_value(self, accumulator: list[int]) -> int:
        return accumulator[0]

    def get_result_type(self) -> Any:
        return DataTypes.BIGINT()


def _handle() -> GeneratedAggsHandle:
    wrapper = udaf(WeightedSum())
    name = UserAggregateName("WSUM", wrapper.aggregate, wrapper.result_type)
    types = [DataTypes.INT(), DataTypes.INT()]
    return GeneratedAggsHandle([AggCall(resolve_aggregate(name, types, retracting=True).function, (0, 1))])


def test_accumulate_retract_merge_and_value() -> None:
    handle = _handle()
    accs = handle.create_accumulators()
    handle.accumulate(accs, Row(3, 2))
    handle.accumulate(accs, Row(1, 5))
    assert handle.get_value(accs) == (11,)
    handle.retract(accs, Row(3, 2))
    assert handle.get_value(accs) == (5,)
    other = handle.create_accumulators()
    handle.accumulate(other, Row(10, 1))
    handle.merge(accs, other)
    assert handle.get_value(accs) == (15,)
    assert not handle.record_count_is_zero(accs)


def test_name_carries_function_and_type_through_pickle() -> None:
    wrapper = udaf(WeightedSum(), result_type=DataTypes.INT())
    name = UserAggregateName("WSUM", wrapper.aggregate, wrapper.result_type)
    copy = pickle.loads(pickle.dumps(name))
    assert copy == "WSUM"
    assert isinstance(copy, UserAggregateName)
    assert str(copy.result_type) == "INT"
    assert isinstance(copy.function, WeightedSum)


def test_registration_and_errors() -> None:
    register("my_wsum", WeightedSum())
    found = aggregate_function("MY_WSUM")
    assert found is not None and str(found.result_type) == "BIGINT"

    class NoType(WeightedSum):
        def get_result_type(self) -> Any:
            return None

    with pytest.raises(ValidationException, match="expected a result type"):
        udaf(NoType())
    with pytest.raises(ValidationException, match="expected an AggregateFunction"):
        udaf(lambda x: x)
