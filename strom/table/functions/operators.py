"""Flink's SQL operators bound at plan time: :func:`resolve_operator` (contract §4).

``resolve_operator(op, arg_types)`` returns a :class:`BoundFunction` for

- arithmetic ``+ - * / %`` (two arguments) and unary ``-`` / ``+`` (one argument): :mod:`.arithmetic`;
- comparisons ``= <> < <= > >=`` across numeric types, strings, booleans, date-times (operands widened to their
  common type first), ``IS [NOT] DISTINCT FROM``;
- ``AND``, ``OR`` (three-valued), ``NOT``; ``IS [NOT] NULL``, ``IS [NOT] TRUE``, ``IS [NOT] FALSE``,
  ``IS [NOT] UNKNOWN`` (never NULL);
- ``LIKE`` / ``NOT LIKE`` / ``SIMILAR TO`` (value, pattern[, escape]); ``BETWEEN`` / ``NOT BETWEEN`` /
  ``BETWEEN SYMMETRIC`` (value, low, high); ``IN`` / ``NOT IN`` (value, item, item, …); ``||``.

Strict operators return NULL when an operand is NULL. ``literals`` (argument values known at plan time, ``None``
otherwise) lets LIKE compile its pattern and IN build its set once.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

from strom.table.errors import ValidationException
from strom.table.functions import like
from strom.table.functions.arithmetic import arithmetic, negate, strict_integer_op
from strom.table.functions.bound_function import (
    DEFAULT_CONTEXT,
    BoundFunction,
    FunctionContext,
    arity,
    nullable_if_any,
    strict,
    validation_error,
)
from strom.table.functions.cast import converter
from strom.table.functions.type_inference import find_common_type, is_string
from strom.table.logical_types import (
    MAX_LENGTH,
    BooleanType,
    CharType,
    DataType,
    LogicalTypeFamily,
    LogicalTypeRoot,
    NullType,
    VarCharType,
)

__all__ = ["OPERATORS", "resolve_operator"]

_R = LogicalTypeRoot
_F = LogicalTypeFamily
_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "=": operator.eq,
    "<>": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def _and(a: Any, b: Any) -> bool | None:
    if a is False or b is False:
        return False
    if a is None or b is None:
        return None
    return True


def _or(a: Any, b: Any) -> bool | None:
    if a is True or b is True:
        return True
    if a is None or b is None:
        return None
    return False


_IS: dict[str, Callable[[Any], bool]] = {
    "IS NULL": lambda v: v is None,
    "IS NOT NULL": lambda v: v is not None,
    "IS TRUE": lambda v: v is True,
    "IS NOT TRUE": lambda v: v is not True,
    "IS FALSE": lambda v: v is False,
    "IS NOT FALSE": lambda v: v is not False,
    "IS UNKNOWN": lambda v: v is None,
    "IS NOT UNKNOWN": lambda v: v is not None,
}


def _comparable(
    op: str, types: Sequence[DataType], ctx: FunctionContext
) -> tuple[DataType, list[Callable[[Any], Any]]]:
    """The common type of *types* and the conversions of each operand's non-NULL value into it."""
    roots = {t.type_root for t in types}
    if _R.DATE in roots and roots & {_R.TIMESTAMP_WITHOUT_TIME_ZONE, _R.TIMESTAMP_WITH_LOCAL_TIME_ZONE}:
        raise validation_error(op, "operands of comparable types", types, "CAST the DATE to a TIMESTAMP")
    common = find_common_type([t.nullable() for t in types])
    if common is None:
        common = _implicit_comparison_type(op, types)
    if common is None or (common.has_family(_F.CONSTRUCTED) and op not in ("=", "<>", "IN", "IS DISTINCT FROM")):
        raise validation_error(op, "operands of comparable types", types, "CAST one side to the other's type")
    convs = []
    for t in types:
        same = t.type_root is common.type_root and not t.has_family(_F.TIMESTAMP) and t.type_root is not _R.DECIMAL
        convs.append(_identity if same or isinstance(t, NullType) else converter(t, common, ctx))
    return common, convs


def _implicit_comparison_type(op: str, types: Sequence[DataType]) -> DataType | None:
    """Flink's implicit conversions in comparisons: a string meets a date-time as that date-time, anything else as a
    string; a string never meets a number."""
    strings = [t for t in types if is_string(t)]
    others = [t for t in types if not is_string(t) and not isinstance(t, NullType)]
    if not strings or not others:
        return None
    other = others[0]
    if other.has_family(_F.NUMERIC):
        names = " and ".join(t.type_root.name for t in types[:2])
        raise ValidationException(
            f"{op}: implicit type conversion between {names} is not supported now; "
            "expected operands of comparable types; CAST one side to the other's type"
        )
    if other.has_family(_F.DATETIME):
        return other.nullable()
    return VarCharType(MAX_LENGTH)


def _identity(v: Any) -> Any:
    return v


def _comparison(op: str, types: Sequence[DataType], ctx: FunctionContext) -> BoundFunction:
    arity(op, types, 2)
    _, (ca, cb) = _comparable(op, types, ctx)
    cmp = _COMPARE[op]
    same = ca is _identity and cb is _identity
    call = strict(cmp, 2) if same else strict(lambda a, b: cmp(ca(a), cb(b)), 2)
    return BoundFunction(op, nullable_if_any(BooleanType(), types), call)


def _distinct(op: str, types: Sequence[DataType], ctx: FunctionContext) -> BoundFunction:
    arity(op, types, 2)
    _, (ca, cb) = _comparable(op, types, ctx)
    negated = op == "IS NOT DISTINCT FROM"

    def call(a: Any, b: Any) -> bool:
        distinct = (a is None) != (b is None) if a is None or b is None else bool(ca(a) != cb(b))
        return not distinct if negated else distinct

    return BoundFunction(op, BooleanType(False), call)


def _logic(op: str, types: Sequence[DataType]) -> BoundFunction:
    if op == "NOT":
        arity(op, types, 1)
        _require_boolean(op, types)
        return BoundFunction(op, nullable_if_any(BooleanType(), types), strict(lambda v: not v, 1))
    arity(op, types, 2, -1)
    _require_boolean(op, types)
    pair = _and if op == "AND" else _or
    if len(types) == 2:
        call: Callable[..., Any] = pair
    else:

        def call(*values: Any) -> Any:
            result = values[0]
            for v in values[1:]:
                result = pair(result, v)
            return result

    return BoundFunction(op, nullable_if_any(BooleanType(), types), call)


def _require_boolean(op: str, types: Sequence[DataType]) -> None:
    if any(t.type_root not in (_R.BOOLEAN, _R.NULL) for t in types):
        raise validation_error(op, "BOOLEAN operands", types)


def _between(op: str, types: Sequence[DataType], ctx: FunctionContext) -> BoundFunction:
    arity(op, types, 3)
    _, (cv, cl, ch) = _comparable(op, types, ctx)

    def between(v: Any, low: Any, high: Any) -> bool | None:
        ge = None if v is None or low is None else bool(cv(v) >= cl(low))
        le = None if v is None or high is None else bool(cv(v) <= ch(high))
        return _and(ge, le)

    call: Callable[..., Any] = between
    if op == "BETWEEN SYMMETRIC":
        call = lambda v, low, high: _or(between(v, low, high), between(v, high, low))  # noqa: E731
    elif op == "NOT BETWEEN":
        call = lambda v, low, high: _not3(between(v, low, high))  # noqa: E731
    return BoundFunction(op, nullable_if_any(BooleanType(), types), call)


def _not3(v: bool | None) -> bool | None:
    return None if v is None else not v


def _in(op: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    """``value IN (items…)``: TRUE if found; else NULL if the value or an item is NULL; else FALSE."""
    arity(op, types, 2, -1)
    _, convs = _comparable("IN", types, ctx)
    cv, item_convs = convs[0], convs[1:]
    negate_result = op == "NOT IN"
    result_type = nullable_if_any(BooleanType(), types)
    if (
        literals
        and len(literals) == len(types)
        and all(lit is not None or isinstance(t, NullType) for lit, t in zip(literals[1:], types[1:], strict=True))
    ):
        values = [c(x) for c, x in zip(item_convs, literals[1:], strict=True) if x is not None]
        has_null = len(values) < len(types) - 1
        lookup = set(values)

        def call_set(v: Any, *_items: Any) -> bool | None:
            if v is None:
                return None
            found = True if cv(v) in lookup else (None if has_null else False)
            return _not3(found) if negate_result else found

        return BoundFunction(op, result_type, call_set)

    def call(v: Any, *items: Any) -> bool | None:
        if v is None:
            return None
        key, found = cv(v), False
        for c, x in zip(item_convs, items, strict=True):
            if x is None:
                found = None  # type: ignore[assignment]
            elif c(x) == key:
                found = True
                break
        return _not3(found) if negate_result else found

    return BoundFunction(op, result_type, call)


def _concat(op: str, types: Sequence[DataType], ctx: FunctionContext) -> BoundFunction:
    arity(op, types, 2)
    if not all(is_string(t) or isinstance(t, NullType) for t in types):
        if all(t.has_family(_F.BINARY_STRING) for t in types):
            return BoundFunction(op, nullable_if_any(types[0].copy(), types), strict(lambda a, b: a + b, 2))
        raise validation_error(op, "two character strings", types, "CAST the other operand to STRING")
    lengths = [int(getattr(t, "length", 0)) for t in types]
    total = min(sum(lengths), MAX_LENGTH)
    all_char = all(t.type_root is _R.CHAR for t in types)
    result: DataType = CharType(total) if all_char else VarCharType(total)
    return BoundFunction(op, nullable_if_any(result, types), strict(lambda a, b: a + b, 2))


def _unary(op: str, types: Sequence[DataType]) -> BoundFunction:
    t = types[0]
    if not (t.has_family(_F.NUMERIC) or t.has_family(_F.INTERVAL)):
        raise validation_error(op, "a numeric or interval operand", types)
    if op == "+":
        return BoundFunction(op, t, _identity)
    return BoundFunction("-", t, strict(negate(t), 1))


def _arithmetic(op: str, types: Sequence[DataType]) -> BoundFunction:
    if len(types) == 1 and op in ("+", "-"):
        return _unary(op, types)
    arity(op, types, 2)
    a, b = types
    bound = arithmetic(op, a, b)
    if bound is None:
        raise validation_error(op, "numeric operands (or a date-time and an interval)", types)
    result, fn = bound
    if result.type_root in (_R.TINYINT, _R.SMALLINT, _R.INTEGER, _R.BIGINT):
        fast = strict_integer_op(op, result.type_root)
        if fast is not None:
            return BoundFunction(op, result, fast)
    return BoundFunction(op, result, strict(fn, 2))


def _is(op: str, types: Sequence[DataType]) -> BoundFunction:
    arity(op, types, 1)
    if op not in ("IS NULL", "IS NOT NULL"):
        _require_boolean(op, types)
    return BoundFunction(op, BooleanType(False), _IS[op])


OPERATORS = sorted(
    [
        *_COMPARE, "+", "-", "*", "/", "%", "AND", "OR", "NOT", *_IS, "IS DISTINCT FROM", "IS NOT DISTINCT FROM",
        "LIKE", "NOT LIKE", "SIMILAR TO", "NOT SIMILAR TO", "BETWEEN", "NOT BETWEEN", "BETWEEN SYMMETRIC",
        "IN", "NOT IN", "||",
    ]
)  # fmt: skip


def resolve_operator(
    op: str,
    arg_types: Sequence[DataType],
    *,
    literals: Sequence[Any] = (),
    context: FunctionContext | None = None,
) -> BoundFunction:
    """The operator *op* bound to *arg_types*; raises ValidationException for an unknown operator or wrong types."""
    ctx = context or DEFAULT_CONTEXT
    key = " ".join(op.upper().split())
    if key == "!=":
        key = "<>"
    if key in _COMPARE:
        return _comparison(key, arg_types, ctx)
    if key in ("+", "-", "*", "/", "%"):
        return _arithmetic(key, arg_types)
    if key in ("AND", "OR", "NOT"):
        return _logic(key, arg_types)
    if key in _IS:
        return _is(key, arg_types)
    if key in ("IS DISTINCT FROM", "IS NOT DISTINCT FROM"):
        return _distinct(key, arg_types, ctx)
    if key in ("LIKE", "NOT LIKE", "SIMILAR TO", "NOT SIMILAR TO"):
        return like.bind(key, arg_types, literals)
    if key in ("BETWEEN", "NOT BETWEEN", "BETWEEN SYMMETRIC"):
        return _between(key, arg_types, ctx)
    if key in ("IN", "NOT IN"):
        return _in(key, arg_types, literals, ctx)
    if key == "||":
        return _concat(key, arg_types, ctx)
    raise validation_error(op, f"one of the operators {', '.join(OPERATORS)}", arg_types)
