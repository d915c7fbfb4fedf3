"""Flink's conditional functions: COALESCE, NULLIF, IF, IFNULL, GREATEST, LEAST, and CASE's result type.

The branches are widened to their common type (``LogicalTypeMerging.findCommonType``) and each argument is cast to it
at bind time. These functions are *not* strict: COALESCE/IFNULL return the first non-NULL argument; IF takes the
condition's NULL as FALSE. (The arguments arrive evaluated; a planner that wants CASE's laziness compiles CASE itself
with :func:`case_result_type` and :func:`branch_casts`.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from strom.table.errors import ValidationException
from strom.table.functions.bound_function import (
    BoundFunction,
    FunctionContext,
    Resolver,
    arity,
    validation_error,
)
from strom.table.functions.cast import cast_function
from strom.table.functions.type_inference import find_common_type
from strom.table.logical_types import DataType, LogicalTypeRoot, NullType

__all__ = ["FUNCTIONS", "branch_casts", "case_result_type"]


def case_result_type(branch_types: Sequence[DataType], *, has_else: bool = True) -> DataType:
    """The type of ``CASE … THEN t1 … ELSE tn END``: the common type, nullable if a branch is or ELSE is missing."""
    common = find_common_type(list(branch_types))
    if common is None:
        raise validation_error("CASE", "branches of a common type", branch_types, "CAST the branches to one type")
    nullable = not has_else or any(t.is_nullable for t in branch_types)
    return common.copy(nullable=nullable)


def branch_casts(
    types: Sequence[DataType], result: DataType, ctx: FunctionContext | None = None
) -> list[Callable[[Any], Any]]:
    """Per argument, the conversion of its value into *result* (identity where the types already agree)."""
    casts: list[Callable[[Any], Any]] = []
    for t in types:
        if t.copy(nullable=True) == result.copy(nullable=True) or isinstance(t, NullType):
            casts.append(_identity)
        else:
            casts.append(cast_function(t, result.nullable(), context=ctx))
    return casts


def _identity(v: Any) -> Any:
    return v


def _coalesce(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    arity(name, types, 1, -1)
    common = case_result_type(types)
    result = common.copy(nullable=all(t.is_nullable for t in types))
    casts = branch_casts(types, result, ctx)

    def call(*values: Any) -> Any:
        for cast, v in zip(casts, values, strict=True):
            if v is not None:
                return cast(v)
        return None

    return BoundFunction(name, result, call)


def _nullif(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    arity(name, types, 2)
    common = case_result_type(types)
    ca, cb = branch_casts(types, common, ctx)

    def call(a: Any, b: Any) -> Any:
        if a is None:
            return None
        return None if b is not None and ca(a) == cb(b) else a

    return BoundFunction(name, types[0].nullable(), call)


def _if(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    arity(name, types, 3)
    if types[0].type_root not in (LogicalTypeRoot.BOOLEAN, LogicalTypeRoot.NULL):
        raise validation_error(name, "IF(BOOLEAN, value, value)", types)
    if any(t.type_root is LogicalTypeRoot.NULL for t in types[1:]):  # Calcite cannot type IF(c, NULL, x)
        raise ValidationException(
            "Illegal use of 'NULL': expected IF(BOOLEAN, value, value) with typed values; hint: CAST(NULL AS <type>)"
        )
    result = case_result_type(types[1:])
    if types[0].is_nullable:
        result = result.nullable()
    ca, cb = branch_casts(types[1:], result, ctx)

    def call(cond: Any, a: Any, b: Any) -> Any:
        if cond is True:
            return None if a is None else ca(a)
        return None if b is None else cb(b)

    return BoundFunction(name, result, call)


def _ifnull(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    arity(name, types, 2)
    result = case_result_type(types).copy(nullable=types[0].is_nullable and types[1].is_nullable)
    ca, cb = branch_casts(types, result, ctx)

    def call(a: Any, b: Any) -> Any:
        if a is not None:
            return ca(a)
        return None if b is None else cb(b)

    return BoundFunction(name, result, call)


def _extreme(pick: Callable[..., Any]) -> Resolver:
    def resolve(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
        arity(name, types, 1, -1)
        result = case_result_type(types)
        casts = branch_casts(types, result, ctx)

        def call(*values: Any) -> Any:
            if any(v is None for v in values):
                return None
            return pick(c(v) for c, v in zip(casts, values, strict=True))

        return BoundFunction(name, result, call)

    return resolve


FUNCTIONS: dict[str, Resolver] = {
    "COALESCE": _coalesce,
    "NULLIF": _nullif,
    "IF": _if,
    "IFNULL": _ifnull,
    "GREATEST": _extreme(max),
    "LEAST": _extreme(min),
}
