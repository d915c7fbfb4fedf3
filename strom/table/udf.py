"""PyFlink's ``pyflink.table.udf``: Python scalar functions (``@udf``) and table functions (``@udtf``).

A decorated function becomes a :class:`UserDefinedFunctionWrapper`; calling it with expressions gives an
:class:`~strom.table.expression.Expression` the planner binds to the Python callable (with its declared result type),
so a Calc calls it inline like a built-in function. Table functions feed ``Table.flat_map``. Aggregate functions
(``@udaf`` over an :class:`AggregateFunction`) are planned as aggregate calls through the ``AggsHandle`` (their
accumulators live in keyed state, so they must be picklable; Flink's ``ListView``/``MapView`` are plain lists/dicts).
Vectorized (``func_type="pandas"``) functions are not supported yet.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

from sqlglot import exp

from strom.table.errors import ValidationException
from strom.table.expression import Expression, to_sql_expression
from strom.table.types import DataType, parse_type

__all__ = [
    "AggregateFunction",
    "EmittedRows",
    "LateralRows",
    "MappedRow",
    "ScalarFunction",
    "TableAggregateFunction",
    "TableFunction",
    "UserDefinedFunctionWrapper",
    "lookup",
    "register",
    "row_argument_call",
    "udaf",
    "udf",
    "udtaf",
    "udtf",
]

_REGISTRY: dict[str, UserDefinedFunctionWrapper] = {}
_ids = itertools.count()


class ScalarFunction:
    """A scalar function class (``eval``), as PyFlink's."""

    def open(self, function_context: Any) -> None:
        return None

    def eval(self, *args: Any) -> Any:
        raise NotImplementedError

    def close(self) -> None:
        return None


class TableFunction(ScalarFunction):
    """A table function class (``eval`` yields rows), as PyFlink's."""


class AggregateFunction:
    """An aggregate function class, as PyFlink's: a mutable accumulator updated in place by ``accumulate``."""

    def open(self, function_context: Any) -> None:
        return None

    def close(self) -> None:
        return None

    def create_accumulator(self) -> Any:
        raise NotImplementedError

    def accumulate(self, accumulator: Any, *args: Any) -> None:
        raise NotImplementedError

    def retract(self, accumulator: Any, *args: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__}.retract is needed over an updating input")

    def merge(self, accumulator: Any, accumulators: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__}.merge is needed by session windows and two-phase plans")

    def get_value(self, accumulator: Any) -> Any:
        raise NotImplementedError

    def get_result_type(self) -> Any:
        return None

    def get_accumulator_type(self) -> Any:
        return None


class TableAggregateFunction(AggregateFunction):
    """A table aggregate function class, as PyFlink's: ``emit_value(accumulator)`` yields the group's rows."""

    def emit_value(self, accumulator: Any) -> Any:
        raise NotImplementedError

    def get_value(self, accumulator: Any) -> Any:
        return tuple(_row_values(r) for r in self.emit_value(accumulator))


def _row_values(row: Any) -> tuple[Any, ...]:
    if hasattr(row, "_values"):
        return tuple(row._values)
    return tuple(row) if isinstance(row, tuple | list) else (row,)


class EmittedRows:
    """A group row ``[*keys, value]`` as rows ``[*keys, *fields]``: a table aggregate's emitted rows
    (``flat_aggregate``), or with ``single`` the one ROW value of an aggregate (``aggregate``)."""

    def __init__(self, n_keys: int, *, single: bool = False) -> None:
        self.n_keys = n_keys
        self.single = single

    def __call__(self, row: Any) -> list[tuple[Any, ...]]:
        values = row._values
        keys = tuple(values[: self.n_keys])
        if self.single:
            return [keys + _row_values(values[self.n_keys])]
        return [keys + emitted for emitted in values[self.n_keys] or ()]


class MappedRow:
    """``Table.map`` / ``flat_map``: a function of the input row (as a named ``Row``) giving one output row, or
    with ``table`` the rows it yields."""

    def __init__(self, function: Any, names: Sequence[str], *, table: bool = False) -> None:
        self.function = function
        self.names = tuple(names)
        self.table = table

    def __call__(self, row: Any) -> list[tuple[Any, ...]]:
        from strom.api.row import Row

        result = self.function(Row(**dict(zip(self.names, row._values, strict=True))))
        if self.table:
            return [] if result is None else [_row_values(r) for r in result]
        return [_row_values(result)]


class LateralRows:
    """``Table.join_lateral``: the input row followed by each row a table function yields for it (given the values
    at ``columns``, or with ``columns`` None the input row as a named ``Row``)."""

    def __init__(self, function: Any, names: Sequence[str], columns: tuple[int, ...] | None) -> None:
        self.function = function
        self.names = tuple(names)
        self.columns = columns

    def __call__(self, row: Any) -> list[tuple[Any, ...]]:
        from strom.api.row import Row

        values = row._values
        if self.columns is None:
            results = self.function(Row(**dict(zip(self.names, values, strict=True))))
        else:
            results = self.function(*[values[c] for c in self.columns])
        own = tuple(values)
        return [] if results is None else [own + _row_values(r) for r in results]


class _RowArgument(AggregateFunction):
    """An aggregate called with each input row as one ``Row`` argument (PyFlink's ``aggregate(f)`` without args)."""

    def __init__(self, function: Any, names: Sequence[str]) -> None:
        self.function = function
        self.names = tuple(names)

    def _row(self, args: tuple[Any, ...]) -> Any:
        from strom.api.row import Row

        return Row(**dict(zip(self.names, args, strict=True)))

    def create_accumulator(self) -> Any:
        return self.function.create_accumulator()

    def accumulate(self, accumulator: Any, *args: Any) -> None:
        self.function.accumulate(accumulator, self._row(args))

    def retract(self, accumulator: Any, *args: Any) -> None:
        self.function.retract(accumulator, self._row(args))

    def merge(self, accumulator: Any, accumulators: Any) -> None:
        self.function.merge(accumulator, accumulators)

    def get_value(self, accumulator: Any) -> Any:
        return self.function.get_value(accumulator)


class _TableRowArgument(_RowArgument, TableAggregateFunction):
    def emit_value(self, accumulator: Any) -> Any:
        return self.function.emit_value(accumulator)


def row_argument_call(wrapper: UserDefinedFunctionWrapper, names: Sequence[str]) -> exp.Anonymous:
    """A call of ``wrapper``'s aggregate that passes the columns ``names`` as one ``Row``."""
    function = wrapper.aggregate
    kind = _TableRowArgument if isinstance(function, TableAggregateFunction) else _RowArgument
    adapted = UserDefinedFunctionWrapper(
        None, wrapper.result_types, table_function=False, aggregate=kind(function, names)
    )
    node = adapted(*[exp.column(n, quoted=True) for n in names])._node
    assert isinstance(node, exp.Anonymous)
    return node


def _as_type(value: Any) -> DataType:
    return parse_type(value) if isinstance(value, str) else value


class UserDefinedFunctionWrapper:
    """A Python function usable in the Table API (call it with expressions) and in SQL once registered."""

    def __init__(
        self,
        func: Any,
        result_types: Sequence[DataType],
        *,
        table_function: bool,
        aggregate: AggregateFunction | None = None,
    ) -> None:
        self.func = func
        self.result_types = tuple(result_types)
        self.table_function = table_function
        self.aggregate = aggregate
        name = getattr(func, "__name__", None) or type(aggregate).__name__
        self._name = f"__py_{name}_{next(_ids)}"
        _REGISTRY[self._name] = self
        _REGISTRY[self._name.upper()] = self

    @property
    def result_type(self) -> DataType:
        return self.result_types[0]

    def __call__(self, *args: Any) -> Expression:
        return Expression(exp.Anonymous(this=self._name, expressions=[to_sql_expression(a) for a in args]))

    def alias(self, *names: str) -> Expression:
        return self().alias(*names)


def register(name: str, function: Any) -> None:
    """``create_temporary_function(name, f)``: ``name(...)`` in SQL calls ``f``."""
    if isinstance(function, AggregateFunction):
        function = udaf(function)
    if not isinstance(function, UserDefinedFunctionWrapper):
        raise ValidationException(
            f"expected a function made with @udf, @udtf or @udaf; got a {type(function).__name__}"
        )
    _REGISTRY[name.upper()] = function


def lookup(name: str) -> UserDefinedFunctionWrapper | None:
    return _REGISTRY.get(name) or _REGISTRY.get(name.upper())


def _callable(f: Any) -> Callable[..., Any]:
    if isinstance(f, ScalarFunction):
        return f.eval
    return f  # type: ignore[no-any-return]


def udf(
    f: Any = None,
    input_types: Any = None,
    result_type: Any = None,
    deterministic: bool | None = None,
    name: str | None = None,
    func_type: str = "general",
    udf_type: str | None = None,
) -> Any:
    """``@udf(result_type=DataTypes.STRING())``: a Python scalar function."""
    if func_type != "general" or udf_type not in (None, "general"):
        raise ValidationException("udf: only func_type='general' is supported; got a vectorized (pandas) function")
    if result_type is None:
        raise ValidationException("udf: expected a result_type; got none; hint: @udf(result_type=DataTypes.STRING())")

    def wrap(func: Any) -> UserDefinedFunctionWrapper:
        return UserDefinedFunctionWrapper(_callable(func), [_as_type(result_type)], table_function=False)

    return wrap(f) if f is not None else wrap


def udtf(
    f: Any = None,
    input_types: Any = None,
    result_types: Any = None,
    deterministic: bool | None = None,
    name: str | None = None,
) -> Any:
    """``@udtf(result_types=[DataTypes.STRING()])``: a Python table function yielding rows."""
    if result_types is None:
        raise ValidationException("udtf: expected result_types; got none; hint: @udtf(result_types=[DataTypes.INT()])")
    types = [_as_type(t) for t in (result_types if isinstance(result_types, list | tuple) else [result_types])]

    def wrap(func: Any) -> UserDefinedFunctionWrapper:
        return UserDefinedFunctionWrapper(_callable(func), types, table_function=True)

    return wrap(f) if f is not None else wrap


def udaf(
    f: Any = None,
    input_types: Any = None,
    result_type: Any = None,
    accumulator_type: Any = None,
    deterministic: bool | None = None,
    name: str | None = None,
    func_type: str = "general",
) -> Any:
    """``udaf(MyAgg(), result_type=DataTypes.BIGINT())``: a Python aggregate function (``AggregateFunction``)."""
    if func_type != "general":
        raise ValidationException("udaf: only func_type='general' is supported; got a vectorized (pandas) function")

    def wrap(function: Any) -> UserDefinedFunctionWrapper:
        if isinstance(function, type) and issubclass(function, AggregateFunction):
            function = function()
        if not isinstance(function, AggregateFunction):
            raise ValidationException(
                f"udaf: expected an AggregateFunction instance; got a {type(function).__name__}; "
                "hint: class MyAgg(AggregateFunction) with create_accumulator, accumulate and get_value"
            )
        declared = result_type if result_type is not None else function.get_result_type()
        if declared is None:
            raise ValidationException(
                f"udaf: expected a result type for {type(function).__name__}; got none; "
                "hint: udaf(f, result_type=DataTypes.BIGINT()) or define get_result_type"
            )
        return UserDefinedFunctionWrapper(None, [_as_type(declared)], table_function=False, aggregate=function)

    return wrap(f) if f is not None else wrap


def aggregate_function(name: str) -> UserDefinedFunctionWrapper | None:
    """The ``@udaf`` registered (or created) under ``name``, else None."""
    found = lookup(name)
    return found if found is not None and found.aggregate is not None else None


def udtaf(
    f: Any = None,
    input_types: Any = None,
    result_type: Any = None,
    accumulator_type: Any = None,
    deterministic: bool | None = None,
    name: str | None = None,
    func_type: str = "general",
) -> Any:
    """``udtaf(Top2(), result_type=DataTypes.ROW(...))``: a Python table aggregate (``TableAggregateFunction``)."""

    def wrap(function: Any) -> UserDefinedFunctionWrapper:
        if isinstance(function, type) and issubclass(function, TableAggregateFunction):
            function = function()
        if not isinstance(function, TableAggregateFunction):
            raise ValidationException(
                f"udtaf: expected a TableAggregateFunction instance; got a {type(function).__name__}; "
                "hint: class Top2(TableAggregateFunction) with create_accumulator, accumulate and emit_value"
            )
        wrapper: UserDefinedFunctionWrapper = udaf(function, result_type=result_type, func_type=func_type)
        return wrapper

    return wrap(f) if f is not None else wrap
