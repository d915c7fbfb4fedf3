"""The planner's door to sqltypes' function binding (``strom.table.functions``).

Until sqltypes' ``resolve_function`` / ``resolve_operator`` / ``cast_function`` are merged, a small stand-in binds the
arithmetic and comparison operators so the planner runs end to end; once they exist they are used unchanged.
"""

from __future__ import annotations

import operator as _op
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from strom.table.errors import ValidationException
from strom.table.types import DataType, parse_type

__all__ = ["BoundFunction", "cast_function", "resolve_function", "resolve_operator"]


@dataclass(frozen=True, slots=True)
class BoundFunction:
    name: str
    result_type: DataType
    call: Callable[..., Any]


_ORDER = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "DECIMAL", "FLOAT", "DOUBLE")


def _strict(fn: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        return None if any(a is None for a in args) else fn(*args)

    return call


def _int_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _stand_in_operator(op: str, arg_types: Sequence[DataType]) -> BoundFunction:
    roots = [t.type_root.name for t in arg_types]
    nullable = any(t.is_nullable for t in arg_types)
    boolean = parse_type("BOOLEAN" if nullable else "BOOLEAN NOT NULL")
    comparisons: dict[str, Callable[..., Any]] = {
        "=": _op.eq,
        "<>": _op.ne,
        "<": _op.lt,
        "<=": _op.le,
        ">": _op.gt,
        ">=": _op.ge,
    }
    if op in comparisons:
        numeric = [r in _ORDER for r in roots]
        if any(numeric) and not all(numeric):
            raise ValidationException(
                f"implicit type conversion between {arg_types[0]} and {arg_types[1]} is not supported"
            )
        return BoundFunction(op, boolean, _strict(comparisons[op]))
    if op in ("+", "-", "*", "/", "%") and all(r in _ORDER for r in roots):
        widest = max(arg_types, key=lambda t: _ORDER.index(t.type_root.name))
        result = widest.nullable() if nullable else widest.not_null()
        integral = widest.type_root.name in _ORDER[:4]
        fns: dict[str, Callable[..., Any]] = {
            "+": _op.add,
            "-": _op.sub,
            "*": _op.mul,
            "/": _int_div if integral else _op.truediv,
            "%": _op.mod,
        }
        return BoundFunction(op, result, _strict(fns[op]))
    if op in ("+", "-") and roots[0].startswith("TIMESTAMP") and roots[1].startswith("INTERVAL"):
        fn = _op.add if op == "+" else _op.sub
        return BoundFunction(op, arg_types[0].nullable() if nullable else arg_types[0], _strict(fn))
    if op == "||":
        return BoundFunction(op, parse_type("STRING"), _strict(lambda a, b: f"{a}{b}"))
    if op == "IN":
        return BoundFunction(op, boolean, _strict(lambda x, *items: x in items))
    if op == "BETWEEN":
        return BoundFunction(op, boolean, _strict(lambda x, lo, hi: lo <= x <= hi))
    raise ValidationException(f"expected a supported operator; got {op} for ({', '.join(map(str, arg_types))})")


def _stand_in_function(name: str, arg_types: Sequence[DataType]) -> BoundFunction:
    simple: dict[str, tuple[str, Callable[..., Any]]] = {
        "UPPER": ("STRING", str.upper),
        "LOWER": ("STRING", str.lower),
        "CHAR_LENGTH": ("INT", len),
        "ABS": (str(arg_types[0]) if arg_types else "INT", abs),
    }
    if name in simple:
        type_text, fn = simple[name]
        return BoundFunction(name, parse_type(type_text), _strict(fn))
    raise ValidationException(f"No match found for function signature {name}({', '.join(map(str, arg_types))})")


def _stand_in_cast(from_type: DataType, to_type: DataType, *, try_cast: bool = False) -> Callable[[Any], Any]:
    root = to_type.type_root.name
    convert: Callable[[Any], Any] = str
    if root in _ORDER[:4]:
        convert = int
    elif root in ("FLOAT", "DOUBLE"):
        convert = float
    return _strict(convert)


try:  # sqltypes' binding, once merged
    from strom.table.functions import (  # type: ignore[attr-defined,unused-ignore]
        cast_function,
        resolve_function,
        resolve_operator,
    )
except ImportError:  # pragma: no cover - the stand-in above
    resolve_operator = _stand_in_operator
    resolve_function = _stand_in_function
    cast_function = _stand_in_cast
