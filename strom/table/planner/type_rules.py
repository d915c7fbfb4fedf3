"""Calcite's ``leastRestrictive`` as Flink uses it: the common type of CASE branches, COALESCE and UNION inputs."""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from strom.table.errors import ValidationException
from strom.table.sql.parser import at
from strom.table.types import DataType, get_precision, get_scale, parse_type

__all__ = ["common_type"]

_NUMERIC_ORDER = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "DECIMAL", "FLOAT", "DOUBLE")
_TEXT = ("CHAR", "VARCHAR")


def common_type(types: Sequence[DataType], node: exp.Expr | None = None) -> DataType:
    """The least restrictive type of ``types`` (nullable if any is); NULL literals take the others' type."""
    known = [t for t in types if t.type_root.name != "NULL"]
    nullable = any(t.is_nullable for t in types)
    if not known:
        return parse_type("NULL")
    roots = {t.type_root.name for t in known}
    if len(set(known)) == 1 or all(t.copy(nullable=True) == known[0].copy(nullable=True) for t in known):
        result = known[0]
    elif roots <= set(_TEXT):
        lengths = [int(getattr(t, "length", 1)) for t in known]
        same = roots == {"CHAR"} and len(set(lengths)) == 1
        result = parse_type(f"CHAR({lengths[0]})" if same else f"VARCHAR({max(lengths)})")
    elif roots <= set(_NUMERIC_ORDER):
        result = _numeric(known)
    elif len(roots) == 1:
        result = known[0]
    else:
        raise ValidationException(
            f"SQL validation failed{at(node)}: expected operands of one type family; "
            f"got {', '.join(str(t) for t in known)}; hint: CAST them to a common type"
        )
    return result.nullable() if nullable else result.not_null()


def _numeric(types: Sequence[DataType]) -> DataType:
    widest = max(types, key=lambda t: _NUMERIC_ORDER.index(t.type_root.name))
    root = widest.type_root.name
    if root != "DECIMAL":
        return widest
    scale = max(get_scale(t) for t in types if t.type_root.name in _NUMERIC_ORDER[:5])
    integer_digits = max(get_precision(t) - get_scale(t) for t in types if t.type_root.name in _NUMERIC_ORDER[:5])
    return parse_type(f"DECIMAL({min(38, integer_digits + scale)}, {scale})")
