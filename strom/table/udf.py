"""PyFlink's ``pyflink.table.udf``: Python scalar (``@udf``), table (``@udtf``), aggregate (``@udaf``) and table
aggregate (``@udtaf``) functions, with PyFlink's abstract base classes (``ScalarFunction.eval``,
``AggregateFunction.create_accumulator/accumulate/get_value``, ``TableAggregateFunction.emit_value``, …).

A decorated function becomes a :class:`UserDefinedFunctionWrapper`; calling it with expressions gives an
:class:`~strom.table.expression.Expression` the planner binds to the Python callable (with its declared result type),
so a Calc calls it inline like a built-in function. Table functions feed ``Table.flat_map``. Aggregate functions
(``@udaf`` over an :class:`AggregateFunction`) are planned as aggregate calls through the ``AggsHandle`` (their
accumulators live in keyed state, so they must be picklable; Flink's ``ListView``/``MapView`` are plain lists/dicts).
Vectorized (``func_type="pandas"``) functions are adapted by :mod:`strom.table.pandas_udf`; an ``async def`` (or
``AsyncScalarFunction``) is awaited per call.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import threading
from collections.abc import Callable, Sequence
from typing import Any

from sqlglot import exp

from strom.table.errors import ValidationException
from strom.table.expression import Expression, to_sql_expression
from strom.table.types import DataType, parse_type
from strom.table.user_defined_function import (
    AggregateFunction,
    AsyncScalarFunction,
    ImperativeAggregateFunction,
    ScalarFunction,
    TableAggregateFunction,
    TableFunction,
    UserDefinedFunction,
)

__all__ = [
    "AggregateFunction",
    "AsyncScalarFunction",
    "EmittedRows",
    "FunctionContext",
    "ImperativeAggregateFunction",
    "LateralRows",
    "MappedRow",
    "ScalarFunction",
    "TableAggregateFunction",
    "TableFunction",
    "UserDefinedFunction",
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


class _EmittedValues(AggregateFunction):
    """A table aggregate as an aggregate call: its value is the tuple of the rows ``emit_value`` yields."""

    def __init__(self, function: TableAggregateFunction) -> None:
        self.function = function

    def create_accumulator(self) -> Any:
        return self.function.create_accumulator()

    def accumulate(self, accumulator: Any, *args: Any) -> None:
        self.function.accumulate(accumulator, *args)

    def retract(self, accumulator: Any, *args: Any) -> None:
        self.function.retract(accumulator, *args)

    def merge(self, accumulator: Any, accumulators: Any) -> None:
        self.function.merge(accumulator, accumulators)

    def get_value(self, accumulator: Any) -> Any:
        return tuple(_row_values(r) for r in self.function.emit_value(accumulator))


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


class OuterLateralRows(LateralRows):
    """``Table.left_outer_join_lateral``: as :class:`LateralRows`, and a row the function yields nothing for is kept,
    padded with ``width`` NULLs."""

    def __init__(self, function: Any, names: Sequence[str], columns: tuple[int, ...] | None, width: int) -> None:
        super().__init__(function, names, columns)
        self.padding = (None,) * width

    def __call__(self, row: Any) -> list[tuple[Any, ...]]:
        return super().__call__(row) or [tuple(row._values) + self.padding]


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


def row_argument_call(wrapper: UserDefinedFunctionWrapper, names: Sequence[str]) -> exp.Anonymous:
    """A call of ``wrapper``'s aggregate that passes the columns ``names`` as one ``Row``."""
    adapted = UserDefinedFunctionWrapper(
        None,
        wrapper.result_types,
        table_function=False,
        aggregate=_RowArgument(wrapper.aggregate, names),
        table_aggregate=wrapper.table_aggregate,
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
        table_aggregate: bool = False,
        name: str | None = None,
    ) -> None:
        self.func = func
        self.result_types = tuple(result_types)
        self.table_function = table_function
        self.aggregate = aggregate
        self.table_aggregate = table_aggregate  # a @udtaf: ``aggregate`` gives the tuple of its emitted rows
        name = name or getattr(func, "__name__", None) or type(getattr(aggregate, "function", aggregate)).__name__
        self._name = f"__py_{name}_{next(_ids)}"
        _REGISTRY[self._name] = self
        _REGISTRY[self._name.upper()] = self

    @property
    def result_type(self) -> DataType:
        return self.result_types[0]

    def bound_to(self, arg_types: Sequence[DataType]) -> Any:
        """The aggregate an aggregate call over arguments of ``arg_types`` runs (a pandas one gets their dtypes)."""
        bind = getattr(self.aggregate, "with_argument_types", None)
        return bind(list(arg_types)) if callable(bind) else self.aggregate

    def __call__(self, *args: Any) -> Expression:
        return Expression(exp.Anonymous(this=self._name, expressions=[to_sql_expression(a) for a in args]))

    def alias(self, *names: str) -> Expression:
        return self().alias(*names)


def register(name: str, function: Any) -> None:
    """``create_temporary_function(name, f)``: ``name(...)`` in SQL calls ``f``."""
    if isinstance(function, ImperativeAggregateFunction):
        function = udaf(function)
    if not isinstance(function, UserDefinedFunctionWrapper):
        raise ValidationException(
            f"expected a function made with @udf, @udtf or @udaf; got a {type(function).__name__}"
        )
    _REGISTRY[name.upper()] = function


def unregister(name: str) -> None:
    """``DROP FUNCTION name``: ``name(...)`` no longer calls the function registered by :func:`register`."""
    _REGISTRY.pop(name.upper(), None)


def lookup(name: str) -> UserDefinedFunctionWrapper | None:
    return _REGISTRY.get(name) or _REGISTRY.get(name.upper())


class FunctionContext:
    """PyFlink's ``FunctionContext`` given to ``open``: the job parameters (none are set in strom)."""

    def get_job_parameter(self, key: str, default_value: str) -> str:
        return default_value


class _Opened:
    """A function class whose ``open`` does work: opened on its first call in the subtask, then ``eval``."""

    def __init__(self, function: UserDefinedFunction) -> None:
        self.function = function
        self.eval: Callable[..., Any] | None = None

    def __call__(self, *args: Any) -> Any:
        if self.eval is None:
            self.function.open(FunctionContext())
            evaluate: Callable[..., Any] = self.function.eval  # type: ignore[attr-defined]
            self.eval = _awaited(evaluate) if isinstance(self.function, AsyncScalarFunction) else evaluate
        return self.eval(*args)

    def __getstate__(self) -> dict[str, Any]:
        return {"function": self.function, "eval": None}


class _Awaited:
    """An async function (``async def`` or ``AsyncScalarFunction.eval``) called in a Calc: awaited on an event loop of
    the subtask's thread — a call nested in another's arguments one at a time here, the others concurrently per batch
    (:mod:`strom.table.runtime.async_calc`)."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function

    def __call__(self, *args: Any) -> Any:
        return event_loop().run_until_complete(self.function(*args))


_LOOPS: dict[int, asyncio.AbstractEventLoop] = {}


def event_loop() -> asyncio.AbstractEventLoop:
    """The event loop of the calling subtask's thread (async scalar functions run on it)."""
    loop = _LOOPS.get(threading.get_ident())
    if loop is None:
        loop = _LOOPS[threading.get_ident()] = asyncio.new_event_loop()
    return loop


def coroutine_function(function: Any) -> Callable[..., Any] | None:
    """The ``async def`` behind a Calc's call of an async scalar function (opened first), else None."""
    if isinstance(function, _Opened) and isinstance(function.function, AsyncScalarFunction):
        if function.eval is None:
            function.function.open(FunctionContext())
            function.eval = _awaited(function.function.eval)
        function = function.eval
    return function.function if isinstance(function, _Awaited) else None


def is_async_call(function: Any) -> bool:
    """Whether a Calc's call is of an async scalar function (``async def`` or ``AsyncScalarFunction``)."""
    return isinstance(function, _Awaited) or (
        isinstance(function, _Opened) and isinstance(function.function, AsyncScalarFunction)
    )


def _awaited(function: Callable[..., Any]) -> Callable[..., Any]:
    return _Awaited(function)


def _callable(f: Any) -> Callable[..., Any]:
    if isinstance(f, UserDefinedFunction):
        if type(f).open is not UserDefinedFunction.open:
            return _Opened(f)
        evaluate: Callable[..., Any] = f.eval  # type: ignore[attr-defined]
        return _awaited(evaluate) if isinstance(f, AsyncScalarFunction) else evaluate
    if isinstance(f, type) and issubclass(f, UserDefinedFunction):
        return _callable(f())
    return _awaited(f) if inspect.iscoroutinefunction(f) else f


def udf(
    f: Any = None,
    input_types: Any = None,
    result_type: Any = None,
    deterministic: bool | None = None,
    name: str | None = None,
    func_type: str = "general",
    udf_type: str | None = None,
) -> Any:
    """``@udf(result_type=DataTypes.STRING())``: a Python scalar function; ``func_type="pandas"``: a vectorized one
    (:mod:`strom.table.pandas_udf`); an ``async def`` or ``AsyncScalarFunction`` is awaited per call."""
    kind = udf_type or func_type
    if kind not in ("general", "pandas"):
        raise ValidationException(f"udf: expected func_type 'general' or 'pandas'; got {kind!r}")
    if result_type is None:
        raise ValidationException("udf: expected a result_type; got none; hint: @udf(result_type=DataTypes.STRING())")

    def wrap(func: Any) -> UserDefinedFunctionWrapper:
        if kind == "pandas":
            from strom.table.pandas_udf import PandasScalarFunction

            call: Callable[..., Any] = PandasScalarFunction(_callable(func), _as_type(result_type))
        else:
            call = _callable(func)
        return UserDefinedFunctionWrapper(call, [_as_type(result_type)], table_function=False, name=_name_of(func))

    return wrap(f) if f is not None else wrap


def _name_of(func: Any) -> str:
    return str(getattr(func, "__name__", None) or type(func).__name__)


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
        return UserDefinedFunctionWrapper(_callable(func), types, table_function=True, name=_name_of(func))

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
    """``udaf(MyAgg(), result_type=DataTypes.BIGINT())``: a Python aggregate function (``AggregateFunction``);
    ``@udaf(result_type=..., func_type="pandas")`` over a function of ``pandas.Series``: a vectorized aggregate."""
    if func_type not in ("general", "pandas"):
        raise ValidationException(f"udaf: expected func_type 'general' or 'pandas'; got {func_type!r}")

    def wrap(function: Any) -> UserDefinedFunctionWrapper:
        if isinstance(function, type) and issubclass(function, ImperativeAggregateFunction):
            function = function()
        if func_type == "pandas":
            from strom.table.pandas_udf import PandasAggregateFunction

            if result_type is None:
                raise ValidationException("udaf: expected a result_type for a pandas aggregate; got none")
            function = PandasAggregateFunction(function)
        if not isinstance(function, ImperativeAggregateFunction):
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
        table = isinstance(function, TableAggregateFunction)
        aggregate = _EmittedValues(function) if isinstance(function, TableAggregateFunction) else function
        assert isinstance(aggregate, AggregateFunction)
        return UserDefinedFunctionWrapper(
            None, [_as_type(declared)], table_function=False, aggregate=aggregate, table_aggregate=table
        )

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
        wrapper: UserDefinedFunctionWrapper = udaf(function, result_type=result_type)
        return wrapper

    return wrap(f) if f is not None else wrap
