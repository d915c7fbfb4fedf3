"""Flink's value constructors and collection functions: ARRAY[…], MAP[…], ROW(…), ``ITEM`` (``arr[i]`` 1-based,
``map[k]``), ``FIELD`` (``row.f``), CARDINALITY, ELEMENT, ARRAY_* and MAP_* functions, SPLIT.

ARRAY/MAP/ROW constructors are never NULL; elements are widened to their common type. ``arr[i]`` outside the array
and ``map[k]`` of a missing key are NULL.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from strom.api.row import _create_row
from strom.table.errors import TableRuntimeException, ValidationException
from strom.table.functions.bound_function import (
    BoundFunction,
    FunctionContext,
    Resolver,
    arity,
    nullable_if_any,
    strict,
    validation_error,
)
from strom.table.functions.conditional_functions import branch_casts, case_result_type
from strom.table.functions.type_inference import is_string
from strom.table.logical_constructed_types import ArrayType, MapType, RowField, RowType
from strom.table.logical_types import MAX_LENGTH, BooleanType, DataType, IntType, LogicalTypeFamily, VarCharType

__all__ = ["FUNCTIONS"]

STRING = VarCharType(MAX_LENGTH)


def _array(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    arity(name, types, 1, -1)
    element = case_result_type(types)
    casts = branch_casts(types, element, ctx)
    return BoundFunction(
        name,
        ArrayType(element, False),
        lambda *vs: [None if v is None else c(v) for c, v in zip(casts, vs, strict=True)],
    )


def _map(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    if not types or len(types) % 2:
        raise validation_error(name, "an even number of arguments (key, value, …)", types)
    key, value = case_result_type(types[0::2]), case_result_type(types[1::2])
    kc, vc = branch_casts(types[0::2], key, ctx), branch_casts(types[1::2], value, ctx)

    def call(*vs: Any) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for i in range(0, len(vs), 2):
            k, v = vs[i], vs[i + 1]
            out[None if k is None else kc[i // 2](k)] = None if v is None else vc[i // 2](v)
        return out

    return BoundFunction(name, MapType(key, value, False), call)


def _row(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    arity(name, types, 1, -1)
    fields = [RowField(f"EXPR${i}", t) for i, t in enumerate(types)]
    return BoundFunction(name, RowType(fields, False), lambda *vs: _create_row(None, list(vs)))


def _item(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    arity(name, types, 2)
    container = types[0]
    index = literals[1] if len(literals) > 1 else None
    if isinstance(container, ArrayType) and isinstance(index, int) and index < 1:
        raise ValidationException(f"Array element access needs an index starting at 1 but was {index}.")
    if isinstance(container, ArrayType):

        def at(arr: list[Any], i: int) -> Any:
            return arr[i - 1] if 1 <= i <= len(arr) else None

        return BoundFunction(name, container.element_type.nullable(), strict(at, 2))
    if isinstance(container, MapType):
        return BoundFunction(name, container.value_type.nullable(), strict(lambda m, k: m.get(k), 2))
    if isinstance(container, RowType):
        return BoundFunction(name, container.field_types()[0].nullable(), strict(lambda r, i: r[i - 1], 2))
    raise validation_error(name, "an ARRAY, MAP or ROW before [ ]", types)


def _field(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    row = types[0]
    field = literals[1] if len(literals) > 1 else None
    if not isinstance(row, RowType) or not isinstance(field, str):
        raise validation_error(name, "a ROW and a field name literal", types)
    index = row.field_index(field)
    result = row.field_types()[index]
    if row.is_nullable:
        result = result.nullable()
    return BoundFunction(name, result, lambda r, _f: None if r is None else r[index])


def _collection_fn(
    kinds: str, result: Callable[[Sequence[DataType]], DataType], fn: Callable[..., Any], *, strict_nulls: bool = True
) -> Resolver:
    """*kinds*: a = ARRAY, m = MAP, e = the array's element, s = STRING, i = integer, x = any."""

    def resolve(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
        arity(name, types, len(kinds.rstrip("?")), len(kinds))
        for t, k in zip(types, kinds, strict=False):
            ok = {
                "a": isinstance(t, ArrayType),
                "m": isinstance(t, MapType),
                "c": isinstance(t, ArrayType | MapType),
                "s": is_string(t),
                "i": t.has_family(_INTEGER),
            }.get(k, True)
            if not ok:
                raise validation_error(name, f"arguments of kinds {kinds}", types)
        rtype = result(types)
        call = strict(fn, len(types)) if strict_nulls else fn
        return BoundFunction(name, nullable_if_any(rtype, types) if strict_nulls else rtype, call)

    return resolve


_INTEGER = LogicalTypeFamily.INTEGER_NUMERIC


def _element_of(types: Sequence[DataType]) -> DataType:
    t = types[0]
    return t.element_type if isinstance(t, ArrayType) else STRING


def _element(arr: list[Any]) -> Any:
    if len(arr) > 1:
        raise TableRuntimeException(f"ELEMENT: expected an array of at most one element; got {len(arr)} elements")
    return arr[0] if arr else None


def _array_contains(arr: list[Any], v: Any) -> bool | None:
    """Plain membership, NULL included (Flink: ARRAY_CONTAINS([1, NULL], NULL) is TRUE, ([1, NULL], 5) FALSE)."""
    return None if arr is None else v in arr


def _distinct(arr: list[Any]) -> list[Any]:
    seen: list[Any] = []
    for x in arr:
        if x not in seen:
            seen.append(x)
    return seen


def _slice(arr: list[Any], start: int, end: int | None = None) -> list[Any]:
    n = len(arr)
    s = start + n if start < 0 else start
    e = n if end is None else end + n + 1 if end < 0 else end
    s = max(s, 1)
    return arr[s - 1 : e]


def _non_null(values: list[Any]) -> list[Any]:
    return [v for v in values if v is not None]


def _array_types(types: Sequence[DataType]) -> DataType:
    return types[0]


def _entries_type(types: Sequence[DataType]) -> DataType:
    key, value = types[0].children
    return ArrayType(RowType([RowField("key", key), RowField("value", value)], True))


def _map_from_arrays_type(types: Sequence[DataType]) -> DataType:
    return MapType(types[0].children[0], types[1].children[0])


def _array_contains_resolver(
    name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext
) -> BoundFunction:
    arity(name, types, 2)
    if not isinstance(types[0], ArrayType):
        raise validation_error(name, "ARRAY_CONTAINS(ARRAY, value)", types)
    return BoundFunction(name, BooleanType(types[0].is_nullable), _array_contains)


def _always_nullable(resolver: Resolver) -> Resolver:
    def resolve(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
        bound = resolver(name, types, literals, ctx)
        return BoundFunction(name, bound.result_type.nullable(), bound.call)

    return resolve


def _element_nullable(types: Sequence[DataType]) -> DataType:
    return _element_of(types).nullable()


FUNCTIONS: dict[str, Resolver] = {
    "ARRAY": _array,
    "MAP": _map,
    "ROW": _row,
    "ITEM": _item,
    "FIELD": _field,
    "CARDINALITY": _collection_fn("c", lambda _: IntType(), len),
    "ELEMENT": _collection_fn("a", _element_nullable, _element),
    "ARRAY_CONTAINS": _array_contains_resolver,
    "ARRAY_DISTINCT": _collection_fn("a", _array_types, _distinct),
    "ARRAY_POSITION": _collection_fn("ax", lambda _: IntType(), lambda a, v: a.index(v) + 1 if v in a else 0),
    "ARRAY_REMOVE": _collection_fn("ax", _array_types, lambda a, v: [x for x in a if x != v]),
    "ARRAY_REVERSE": _collection_fn("a", _array_types, lambda a: a[::-1]),
    "ARRAY_SLICE": _collection_fn("aii?", _array_types, _slice),
    "ARRAY_UNION": _collection_fn("aa", _array_types, lambda a, b: _distinct(a + b)),
    "ARRAY_CONCAT": _collection_fn("aa", _array_types, lambda a, b: a + b),
    "ARRAY_MAX": _always_nullable(_collection_fn("a", _element_nullable, lambda a: max(_non_null(a), default=None))),
    "ARRAY_MIN": _always_nullable(_collection_fn("a", _element_nullable, lambda a: min(_non_null(a), default=None))),
    "ARRAY_JOIN": _collection_fn("as", lambda _: STRING, lambda a, sep: sep.join(_non_null(a))),
    "ARRAY_SORT": _collection_fn("a", _array_types, lambda a: [None] * a.count(None) + sorted(_non_null(a))),
    "ARRAY_APPEND": _collection_fn("ax", _array_types, lambda a, v: [*a, v]),
    "ARRAY_PREPEND": _collection_fn("ax", _array_types, lambda a, v: [v, *a]),
    "ARRAY_EXCEPT": _collection_fn("aa", _array_types, lambda a, b: [x for x in _distinct(a) if x not in b]),
    "ARRAY_INTERSECT": _collection_fn("aa", _array_types, lambda a, b: [x for x in _distinct(a) if x in b]),
    "MAP_KEYS": _collection_fn("m", lambda t: ArrayType(t[0].key_type), lambda m: list(m)),  # type: ignore[attr-defined]
    "MAP_VALUES": _collection_fn("m", lambda t: ArrayType(t[0].value_type), lambda m: list(m.values())),  # type: ignore[attr-defined]
    "MAP_ENTRIES": _collection_fn("m", _entries_type, lambda m: [_create_row(None, [k, v]) for k, v in m.items()]),
    "MAP_FROM_ARRAYS": _collection_fn("aa", _map_from_arrays_type, lambda ks, vs: dict(zip(ks, vs, strict=False))),
    "MAP_UNION": _collection_fn("mm", _array_types, lambda a, b: {**a, **b}),
    "SPLIT": _collection_fn("ss", lambda _: ArrayType(STRING), lambda s, d: s.split(d) if d else list(s)),
}
