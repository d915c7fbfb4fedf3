"""The aggregate functions and GeneratedAggsHandle (Flink's AggsHandleFunction) as pure code: accumulate, retract,
DISTINCT, merge, Flink's result types, and the GroupAggFunction changelog rules."""

from __future__ import annotations

import decimal
import pickle
from typing import Any

from strom.api.row import Row, RowKind
from strom.table.functions.aggregate_functions import resolve_aggregate
from strom.table.runtime.aggs_handle import AggCall, GeneratedAggsHandle
from strom.table.runtime.group_agg import GroupAggFunction
from strom.table.types import parse_type


def _call(
    name: str, arg_type: str | None, args: tuple[int, ...], *, distinct: bool = False, retracting: bool = True
) -> AggCall:
    types = [parse_type(arg_type)] if arg_type else []
    return AggCall(resolve_aggregate(name, types, retracting=retracting).function, args, distinct)


def test_result_types_are_flinks() -> None:
    def result(name: str, arg: str | None) -> str:
        return str(resolve_aggregate(name, [parse_type(arg)] if arg else [], retracting=False).result_type)

    assert result("COUNT", None) == "BIGINT NOT NULL"
    assert result("SUM", "INT NOT NULL") == "INT"
    assert result("AVG", "INT") == "INT"
    assert result("SUM", "DECIMAL(10, 2)") == "DECIMAL(38, 2)"
    assert result("AVG", "DECIMAL(10, 2)") == "DECIMAL(38, 6)"
    assert result("MAX", "STRING NOT NULL") == "STRING"


def test_accumulate_retract_and_distinct() -> None:
    handle = GeneratedAggsHandle(
        [
            _call("COUNT", None, ()),
            _call("SUM", "INT", (0,)),
            _call("AVG", "INT", (0,)),
            _call("MIN", "INT", (0,)),
            _call("MAX", "INT", (0,)),
            _call("COUNT", "INT", (0,), distinct=True),
        ]
    )
    accs = handle.create_accumulators()
    for value in (7, -3, 7, None):
        handle.accumulate(accs, Row(value))
    assert handle.get_value(accs) == (4, 11, 3, -3, 7, 2)  # AVG truncates toward zero: 11 / 3 = 3
    handle.retract(accs, Row(-3))
    assert handle.get_value(accs) == (3, 14, 7, 7, 7, 1)
    handle.retract(accs, Row(7))
    assert handle.get_value(accs) == (2, 7, 7, 7, 7, 1)  # one 7 left: still counted once
    handle.retract(accs, Row(7))
    handle.retract(accs, Row(None))
    assert handle.record_count_is_zero(accs)
    assert handle.get_value(accs) == (0, None, None, None, None, 0)
    assert pickle.loads(pickle.dumps(accs)) == accs  # accumulators live in keyed state


def test_merge_and_decimal_average() -> None:
    handle = GeneratedAggsHandle([_call("AVG", "DECIMAL(10, 2)", (0,)), _call("COUNT", "INT", (0,), distinct=True)])
    a, b = handle.create_accumulators(), handle.create_accumulators()
    handle.accumulate(a, Row(decimal.Decimal("1.00")))
    handle.accumulate(b, Row(decimal.Decimal("2.00")))
    handle.accumulate(b, Row(decimal.Decimal("1.00")))
    handle.merge(a, b)
    assert handle.get_value(a) == (decimal.Decimal("1.333333"), 2)


class _State:
    def __init__(self) -> None:
        self.value_: Any = None

    def value(self) -> Any:
        return self.value_

    def update(self, value: Any) -> None:
        self.value_ = value

    def clear(self) -> None:
        self.value_ = None


class _Ctx:
    def get_current_key(self) -> tuple[str]:
        return ("k",)


def test_group_agg_function_emits_flinks_changelog() -> None:
    function = GroupAggFunction(lambda: GeneratedAggsHandle([_call("MAX", "INT", (1,))]))
    function.handle = function.handle_factory()
    function.acc_state = _State()

    def feed(kind: RowKind, value: int) -> list[str]:
        out = function.process_element(Row.of_kind(kind, "k", value), _Ctx())  # type: ignore[arg-type]
        return [f"{r.get_row_kind()}{r._values}" for r in out or ()]

    assert feed(RowKind.UPDATE_BEFORE, 1) == []  # a retraction before any state is ignored
    assert feed(RowKind.INSERT, 5) == ["+I['k', 5]"]
    assert feed(RowKind.INSERT, 3) == []  # the result did not change: nothing
    assert feed(RowKind.INSERT, 9) == ["-U['k', 5]", "+U['k', 9]"]
    assert feed(RowKind.DELETE, 9) == ["-U['k', 9]", "+U['k', 5]"]
    assert feed(RowKind.DELETE, 5) == ["-U['k', 5]", "+U['k', 3]"]
    assert feed(RowKind.DELETE, 3) == ["-D['k', 3]"]  # the group is empty
    assert function.acc_state.value() is None
