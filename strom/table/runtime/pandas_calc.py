"""A Calc with pandas scalar functions called once per batch (Flink's ``PythonCalcSplitRule`` and its
``ArrowPythonScalarFunctionOperator``).

PyFlink hands a ``@udf(func_type="pandas")`` function one ``pandas.Series`` per argument over a whole Arrow batch
of rows and takes a Series of as many results back. :func:`split_pandas_calc` takes the pandas calls out of a
Calc's projection and condition (each becomes a reference to a column appended to the input row, as Flink's split
rule does); :class:`PandasCalcOperator` evaluates each call's arguments per row, calls the function once per strom
batch with a Series per argument (dtypes of the SQL types: FLOAT is ``float32``, as PyFlink's Arrow batches), then
runs the rest of the Calc per row over the row with the results appended. A pandas call whose arguments hold
another one keeps the per-row path (:class:`strom.table.pandas_udf.PandasScalarFunction` called with Series of one).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from strom.runtime.streamrecord import timestamps_of, with_timestamps
from strom.table.errors import TableRuntimeException
from strom.table.pandas_udf import PandasScalarFunction, _series, dtype_of, python_value
from strom.table.planner.codegen import compile_calc, compile_projection
from strom.table.planner.rex import RexCall, RexInputRef, RexNode, RexSpecial
from strom.table.runtime.window.table_stream_operator import TableStreamOperator, make_row

if TYPE_CHECKING:
    from strom.api.datastream import DataStream

__all__ = ["PandasCalcOperator", "pandas_calc", "split_pandas_calc"]


class _Nested(Exception):
    """A pandas call inside another one's arguments: the Calc keeps its per-row path."""


def _has_pandas(node: RexNode) -> bool:
    if isinstance(node, RexCall) and isinstance(node.function, PandasScalarFunction):
        return True
    operands = getattr(node, "operands", ())
    return any(_has_pandas(o) for o in operands)


def split_pandas_calc(
    projection: Sequence[RexNode] | None, condition: RexNode | None, arity: int
) -> tuple[list[RexCall], tuple[RexNode, ...] | None, RexNode | None] | None:
    """``(pandas calls, projection, condition)`` with each call replaced by the input column ``arity + i``; ``None``
    when the Calc has no pandas call or one is nested in another's arguments."""
    calls: list[RexCall] = []

    def rewrite(node: RexNode) -> RexNode:
        if isinstance(node, RexCall):
            if isinstance(node.function, PandasScalarFunction):
                if any(_has_pandas(o) for o in node.operands):
                    raise _Nested
                calls.append(node)
                return RexInputRef(arity + len(calls) - 1, node.type)
            return replace(node, operands=tuple(rewrite(o) for o in node.operands))
        if isinstance(node, RexSpecial):
            return replace(node, operands=tuple(rewrite(o) for o in node.operands))
        return node

    try:
        new_projection = None if projection is None else tuple(rewrite(p) for p in projection)
        new_condition = None if condition is None else rewrite(condition)
    except _Nested:
        return None
    return (calls, new_projection, new_condition) if calls else None


class PandasCalcOperator(TableStreamOperator):
    """The pandas calls of a batch (once each, a Series per argument), then the Calc per row."""

    def __init__(self, calls: Sequence[RexCall], projection: Sequence[RexNode] | None, condition: RexNode | None):
        super().__init__()
        self.name = "PandasCalc"
        self.functions = [c.function for c in calls]
        self.arguments = [compile_projection(c.operands) for c in calls]
        self.dtypes = [[dtype_of(o.type) for o in c.operands] for c in calls]
        self.filtered = condition is not None
        self.calc: Callable[[Any], Any] = compile_calc(projection, condition)

    def _results(
        self, function: Any, arguments: Callable[[Any], list[Any]], dtypes: list[Any], batch: list[Any]
    ) -> list[Any]:
        columns = list(zip(*[arguments(row) for row in batch], strict=True)) or [() for _ in dtypes]
        result = function.function(*[_series(list(c), d) for c, d in zip(columns, dtypes, strict=True)])
        if not hasattr(result, "__len__") or isinstance(result, str) or len(result) != len(batch):
            got = len(result) if hasattr(result, "__len__") and not isinstance(result, str) else type(result).__name__
            raise TableRuntimeException(
                f"pandas udf {getattr(function.function, '__name__', function.function)!r}: expected a pandas.Series "
                f"as long as its input ({len(batch)} rows); got {got}; hint: compute element-wise on the Series"
            )
        return [python_value(v) for v in (result.tolist() if hasattr(result, "tolist") else result)]

    def process_batch(self, batch: list[Any]) -> None:
        self._records_in += len(batch)
        if not batch:
            return
        results = [
            self._results(f, a, d, batch) for f, a, d in zip(self.functions, self.arguments, self.dtypes, strict=True)
        ]
        stamps = timestamps_of(batch)
        calc, out = self.calc, []
        out_stamps: list[Any] = []
        for i, row in enumerate(batch):
            extended = make_row([*row._values, *(r[i] for r in results)], None, row._row_kind)
            if self.filtered:
                for value in calc(extended):
                    out.append(value)
                    out_stamps.append(None if stamps is None else stamps[i])
            else:
                out.append(calc(extended))
        if not self.filtered:
            out_stamps = list(stamps) if stamps is not None else []
        if out:
            self.output.emit(with_timestamps(out, out_stamps if stamps is not None else None))


def pandas_calc(
    stream: DataStream[Any],
    calls: Sequence[RexCall],
    projection: Sequence[RexNode] | None,
    condition: RexNode | None,
    name: str,
) -> DataStream[Any]:
    """The Calc of :func:`split_pandas_calc`'s parts over ``stream``: its pandas calls once per batch."""
    return stream._one_input(name, PandasCalcOperator(calls, projection, condition))
