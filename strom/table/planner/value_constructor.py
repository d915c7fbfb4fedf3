"""Calcite's ``SqlArrayValueConstructor``: ``ARRAY[e1, e2, …]`` → a Python ``list`` of type ``ARRAY<t> NOT NULL``
(``t`` the elements' common type), the input of ``UNNEST`` and of the collection functions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlglot import exp

from strom.table.errors import ValidationException
from strom.table.logical_constructed_types import ArrayType
from strom.table.planner.rex import RexCall, RexNode
from strom.table.planner.type_rules import common_type
from strom.table.sql.parser import at

if TYPE_CHECKING:
    from strom.table.planner.expression_converter import ExpressionConverter

__all__ = ["array_value"]


def _array(*elements: Any) -> list[Any]:
    return list(elements)


def array_value(converter: ExpressionConverter, node: exp.Array) -> RexNode:
    operands = tuple(converter.convert(e) for e in node.expressions)
    if not operands:
        raise ValidationException(f"SQL validation failed{at(node)}: ARRAY[] expects at least one element")
    element = common_type([o.type for o in operands], node)
    return RexCall("ARRAY", _array, operands, ArrayType(element, nullable=False))
