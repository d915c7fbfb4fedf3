"""Flink's ``AggsHandlerCodeGenerator``: the ``accumulate`` / ``retract`` of an aggregation's calls as one generated
function each, compiled once per subtask.

``GeneratedAggsHandle``'s generic ``accumulate`` loops over its calls per row (a tuple unpacked, the FILTER and
DISTINCT checks, the argument gathered, a method call); the generated one is straight-line code over the row's
values with the built-ins inlined — ``COUNT(*)`` is ``accs[i] += 1``, ``COUNT(x)`` a NULL check, ``SUM(x)`` a NULL
check and a tuple — and any other function called directly. Only aggregations without DISTINCT and FILTER are
generated (those keep the generic path); the results are the generic path's exactly.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from strom.table.functions.aggfunctions import Avg, Count, CountStar, Sum
from strom.table.functions.float_aggregate_functions import FloatAvg, FloatSum

if TYPE_CHECKING:
    from strom.api.row import Row
    from strom.table.runtime.aggs_handle import AggCall

__all__ = ["generate_accumulate", "generate_get_value"]

Accumulate = Callable[[list[Any], "Row"], None]


def _argument(args: tuple[int, ...]) -> str:
    if not args:
        return "None"
    if len(args) == 1:
        return f"v[{args[0]}]"
    return f"({', '.join(f'v[{a}]' for a in args)},)"


def _statement(i: int, call: AggCall, sign: str, namespace: dict[str, Any]) -> str:
    function, method = call.function, "accumulate" if sign == "+" else "retract"
    kind = type(function)
    if kind is CountStar:
        return f"    accs[{i}] {sign}= 1"
    if kind is Count and len(call.args) == 1:
        return f"    if v[{call.args[0]}] is not None:\n        accs[{i}] {sign}= 1"
    if (kind is Sum or kind is Avg) and len(call.args) == 1:
        return (
            f"    if (x := v[{call.args[0]}]) is not None:\n"
            f"        a = accs[{i}]\n        accs[{i}] = (a[0] {sign} x, a[1] {sign} 1)"
        )
    if (kind is FloatSum or kind is FloatAvg) and len(call.args) == 1:  # Java floats: SUM rounds each step
        namespace["_c_float"] = ctypes.c_float
        total = f"a[0] {sign} _c_float(x).value"
        return (
            f"    if (x := v[{call.args[0]}]) is not None:\n        a = accs[{i}]\n"
            f"        accs[{i}] = ({f'_c_float({total}).value' if kind is FloatSum else total}, a[1] {sign} 1)"
        )
    name = f"_f{i}"
    namespace[name] = getattr(function, method)
    return f"    accs[{i}] = {name}(accs[{i}], {_argument(call.args)})"


def generate_accumulate(calls: Sequence[AggCall], count_slot: int, sign: str) -> Accumulate | None:
    """``accumulate(accs, row)`` (``sign`` ``+``) or ``retract`` (``-``), or ``None`` when a call has DISTINCT or
    FILTER."""
    if any(c.distinct or c.filter_arg is not None for c in calls):
        return None
    namespace: dict[str, Any] = {}
    body = [_statement(i, c, sign, namespace) for i, c in enumerate(calls)]
    name = "accumulate" if sign == "+" else "retract"
    code = f"def {name}(accs, row):\n    v = row._values\n" + "\n".join(body) + f"\n    accs[{count_slot}] {sign}= 1\n"
    exec(compile(code, f"<aggs {name}>", "exec"), namespace)
    fn: Accumulate = namespace[name]
    fn.__doc__ = code
    return fn


def _value(i: int, call: AggCall, namespace: dict[str, Any]) -> str:
    kind = type(call.function)
    if kind is CountStar or kind is Count:
        return f"accs[{i}]"
    if kind is Sum or kind is FloatSum:
        return f"(a[0] if (a := accs[{i}])[1] > 0 else None)"
    name = f"_g{i}"
    namespace[name] = call.function.get_value
    return f"{name}(accs[{i}])"


def generate_get_value(calls: Sequence[AggCall]) -> Callable[[list[Any]], tuple[Any, ...]]:
    """``get_value(accs)``: the calls' results as a tuple, the built-ins' inlined (any call: DISTINCT and FILTER
    change what is accumulated, not how a result is read)."""
    namespace: dict[str, Any] = {}
    values = "".join(f"{_value(i, c, namespace)}, " for i, c in enumerate(calls))
    code = f"def get_value(accs):\n    return ({values})\n"
    exec(compile(code, "<aggs get_value>", "exec"), namespace)
    fn: Callable[[list[Any]], tuple[Any, ...]] = namespace["get_value"]
    fn.__doc__ = code
    return fn
