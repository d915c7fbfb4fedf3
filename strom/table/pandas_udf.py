"""PyFlink's vectorized (``func_type="pandas"``) Python functions: scalar functions over ``pandas.Series`` and
aggregate functions that reduce a group's ``pandas.Series`` to one value.

A pandas scalar function is called with one ``pandas.Series`` per argument and returns a ``Series`` of as many
values (PyFlink's ``ArrowPythonScalarFunctionOperator``); strom calls it per row with Series of length one, so a
function that only maps element-wise (as PyFlink requires) gives the same values. A pandas aggregate function is
called once per group, window or OVER frame with the ``Series`` of all its rows' arguments (PyFlink's
``DelegatingPandasAggregateFunction``): as an :class:`~strom.table.udf.AggregateFunction` its accumulator is the list
of argument tuples (retract removes one, merge concatenates), so it runs in group, window and OVER aggregations.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from strom.table.errors import TableRuntimeException
from strom.table.types import DataType
from strom.table.user_defined_function import AggregateFunction

__all__ = ["PandasAggregateFunction", "PandasScalarFunction", "dtype_of", "python_value"]


def python_value(value: Any) -> Any:
    """A numpy or pandas scalar as the plain Python value of its SQL type (``numpy.float32(1.5)`` → ``1.5``)."""
    import pandas as pd  # type: ignore[import-untyped,unused-ignore]

    if value is None or value is pd.NaT or (isinstance(value, float) and value != value):
        return None
    item = getattr(value, "item", None)
    if callable(item) and type(value).__module__ == "numpy":
        return item()
    if isinstance(value, pd.Timestamp):
        return value.to_pydatetime()
    return value


_DTYPES = {  # the pandas dtype of a column of each SQL type, as PyFlink's Arrow batches convert (NULLs aside)
    "TINYINT": "int8",
    "SMALLINT": "int16",
    "INTEGER": "int32",
    "BIGINT": "int64",
    "FLOAT": "float32",
    "DOUBLE": "float64",
    "BOOLEAN": "bool",
}
_FLOATING = ("float32", "float64")


def dtype_of(data_type: DataType) -> str | None:
    """The pandas dtype of a SQL type's column (None: pandas infers it, e.g. ``object`` for strings)."""
    return _DTYPES.get(data_type.type_root.name)


def _series(values: list[Any], dtype: str | None = None) -> Any:
    import pandas as pd

    if dtype is not None and (dtype in _FLOATING or None not in values):
        return pd.Series(values, dtype=dtype)
    return pd.Series(values)


class PandasScalarFunction:
    """A ``@udf(func_type="pandas")`` function as a Calc's per-row call: Series of one value in, one value out."""

    def __init__(self, function: Callable[..., Any], result_type: DataType) -> None:
        self.function = function
        self.result_type = result_type

    def __call__(self, *args: Any) -> Any:
        result = self.function(*[_series([a]) for a in args])
        if not hasattr(result, "__len__") or isinstance(result, str) or len(result) != 1:
            raise TableRuntimeException(
                f"pandas udf {getattr(self.function, '__name__', self.function)!r}: expected a pandas.Series as long "
                f"as its input (1 row); got {type(result).__name__}; hint: compute element-wise on the Series"
            )
        return python_value(result.iloc[0] if hasattr(result, "iloc") else result[0])


class PandasAggregateFunction(AggregateFunction):
    """A ``@udaf(func_type="pandas")`` function: the group's arguments collected, then one call with a Series each."""

    def __init__(self, function: Callable[..., Any], dtypes: tuple[str | None, ...] = ()) -> None:
        self.function = function
        self.dtypes = dtypes
        self.__name__ = getattr(function, "__name__", type(function).__name__)

    def with_argument_types(self, types: list[DataType]) -> PandasAggregateFunction:
        """This function over arguments of ``types``: its Series get their pandas dtypes (FLOAT → float32)."""
        return PandasAggregateFunction(self.function, tuple(dtype_of(t) for t in types))

    def create_accumulator(self) -> list[tuple[Any, ...]]:
        return []

    def accumulate(self, accumulator: list[tuple[Any, ...]], *args: Any) -> None:
        accumulator.append(args)

    def retract(self, accumulator: list[tuple[Any, ...]], *args: Any) -> None:
        accumulator.remove(args)

    def merge(self, accumulator: list[tuple[Any, ...]], accumulators: Any) -> None:
        for other in accumulators:
            accumulator.extend(other)

    def get_value(self, accumulator: list[tuple[Any, ...]]) -> Any:
        if not accumulator:
            return None
        dtypes = self.dtypes or (None,) * len(accumulator[0])
        columns = [_series(list(c), d) for c, d in zip(zip(*accumulator, strict=True), dtypes, strict=True)]
        return python_value(self.function(*columns))
