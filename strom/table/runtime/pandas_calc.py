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
from typing import TYPE_CHECKING, Any

from strom.table.errors import TableRuntimeException
from strom.table.pandas_udf import PandasScalarFunction, _series, dtype_of, python_value
from strom.table.planner.rex import RexCall, RexNode
from strom.table.runtime.batch_call_calc import BatchCallCalcOperator, split_calls

if TYPE_CHECKING:
    from strom.api.datastream import DataStream

__all__ = ["PandasCalcOperator", "pandas_calc", "split_pandas_calc"]


def split_pandas_calc(
    projection: Sequence[RexNode] | None, condition: RexNode | None, arity: int
) -> tuple[list[RexCall], tuple[RexNode, ...] | None, RexNode | None] | None:
    """``(pandas calls, projection, condition)`` with each call replaced by the input column ``arity + i``; ``None``
    when the Calc has no pandas call or one is nested in another's arguments."""
    return split_calls(projection, condition, arity, lambda call: isinstance(call.function, PandasScalarFunction))


class PandasCalcOperator(BatchCallCalcOperator):
    """The pandas calls of a batch (once each, a Series per argument), then the Calc per row."""

    def __init__(self, calls: Sequence[RexCall], projection: Sequence[RexNode] | None, condition: RexNode | None):
        super().__init__(calls, projection, condition)
        self.name = "PandasCalc"
        self.dtypes = [[dtype_of(o.type) for o in c.operands] for c in calls]

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

    def call_results(self, batch: list[Any]) -> list[list[Any]]:
        return [
            self._results(f, a, d, batch) for f, a, d in zip(self.functions, self.arguments, self.dtypes, strict=True)
        ]


def pandas_calc(
    stream: DataStream[Any],
    calls: Sequence[RexCall],
    projection: Sequence[RexNode] | None,
    condition: RexNode | None,
    name: str,
) -> DataStream[Any]:
    """The Calc of :func:`split_pandas_calc`'s parts over ``stream``: its pandas calls once per batch."""
    return stream._one_input(name, PandasCalcOperator(calls, projection, condition))
