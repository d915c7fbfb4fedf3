"""Flink's built-in scalar functions by name (``BuiltInFunctionDefinitions``): :func:`resolve_function`.

The families live in their own modules — :mod:`.string_functions` (+ :mod:`.regexp_functions`),
:mod:`.math_functions`, :mod:`.conditional_functions`, :mod:`.temporal_functions` (+ :mod:`.temporal_units`),
:mod:`.json_functions`, :mod:`.collection_functions`, :mod:`.misc_functions` — each a ``FUNCTIONS`` registry of
resolvers ``(name, arg_types, literals, context) -> BoundFunction``. ``FLOOR``/``CEIL`` serve numbers and, with a
unit literal as second argument, date-times (``FLOOR(ts TO HOUR)`` is ``FLOOR(ts, 'HOUR')``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from strom.table.functions import (
    collection_functions,
    conditional_functions,
    json_functions,
    math_functions,
    misc_functions,
    string_functions,
    temporal_functions,
    temporal_units,
)
from strom.table.functions.bound_function import (
    DEFAULT_CONTEXT,
    BoundFunction,
    FunctionContext,
    Resolver,
    validation_error,
)
from strom.table.logical_types import DataType, LogicalTypeFamily

__all__ = ["FUNCTIONS", "function_names", "resolve_function"]


def _floor_ceil(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    if len(types) == 2 and types[0].has_family(LogicalTypeFamily.DATETIME):
        unit = str(literals[1]).upper() if len(literals) > 1 and literals[1] is not None else ""
        return temporal_units.bind_floor_ceil(name, types, unit, ctx)
    if name == "FLOOR":
        return math_functions.numeric_floor(name, types)
    return math_functions.numeric_ceil(name, types)


FUNCTIONS: dict[str, Resolver] = {
    **string_functions.FUNCTIONS,
    **math_functions.FUNCTIONS,
    **conditional_functions.FUNCTIONS,
    **temporal_functions.FUNCTIONS,
    **json_functions.FUNCTIONS,
    **collection_functions.FUNCTIONS,
    **misc_functions.FUNCTIONS,
    "FLOOR": _floor_ceil,
    "CEIL": _floor_ceil,
    "CEILING": _floor_ceil,
}


def function_names() -> list[str]:
    """Every built-in function name :func:`resolve_function` knows."""
    return sorted([*FUNCTIONS, *json_functions.RETURNING])


def resolve_function(
    name: str,
    arg_types: Sequence[DataType],
    *,
    literals: Sequence[Any] = (),
    context: FunctionContext | None = None,
    return_type: DataType | None = None,
) -> BoundFunction:
    """The built-in function *name* bound to *arg_types* (contract §4).

    ``literals[i]`` is argument i's value when it is a literal at plan time (``None`` otherwise; may be empty);
    ``return_type`` is the RETURNING type of JSON_VALUE / JSON_QUERY. Raises
    :class:`~strom.table.errors.ValidationException` for an unknown function or arguments it cannot take.

    >>> from strom.table.types import DataTypes
    >>> resolve_function("UPPER", [DataTypes.STRING()]).call("flink")
    'FLINK'
    """
    key = name.upper()
    ctx = context or DEFAULT_CONTEXT
    lits = list(literals) + [None] * (len(arg_types) - len(literals))
    if key in json_functions.RETURNING:
        return json_functions.RETURNING[key](key, arg_types, lits, ctx, return_type=return_type)
    resolver = FUNCTIONS.get(key)
    if resolver is None:
        raise validation_error(
            name, "a built-in function (see docs/sql/functions.md)", arg_types, f"no function named {name!r}"
        )
    return resolver(key, arg_types, lits, ctx)
