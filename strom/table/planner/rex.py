"""Row expressions (Calcite's ``RexNode``): what the planner resolves SQL and Table API expressions into.

Every node carries its SQL type (a :class:`~strom.table.types.DataType`). Functions are bound at plan time
(``resolve_function`` / ``resolve_operator``), so a :class:`RexCall` holds the Python callable it runs;
:mod:`strom.table.planner.codegen` compiles a list of nodes into one closure over the row.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from strom.table.types import DataType

__all__ = ["RexCall", "RexInputRef", "RexLiteral", "RexNode", "RexSpecial", "input_refs", "shift"]


@dataclass(frozen=True, slots=True)
class RexInputRef:
    """The ``index``-th field of the input row."""

    index: int
    type: DataType
    name: str = ""


@dataclass(frozen=True, slots=True)
class RexLiteral:
    """A constant (``None`` is SQL's NULL of ``type``)."""

    value: Any
    type: DataType


@dataclass(frozen=True, slots=True)
class RexCall:
    """A bound scalar function or operator applied to operands."""

    name: str
    function: Callable[..., Any] = field(compare=False)
    operands: tuple[RexNode, ...]
    type: DataType


@dataclass(frozen=True, slots=True)
class RexSpecial:
    """A form evaluated lazily by the generated code: ``AND``, ``OR`` (three-valued, short-circuit), ``CASE``
    (operands: when₁, then₁, …, else), ``COALESCE`` and ``IS NULL`` / ``IS NOT NULL``."""

    kind: str
    operands: tuple[RexNode, ...]
    type: DataType


RexNode = RexInputRef | RexLiteral | RexCall | RexSpecial


def input_refs(nodes: Sequence[RexNode]) -> set[int]:
    """The input fields the nodes read."""
    found: set[int] = set()
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if isinstance(node, RexInputRef):
            found.add(node.index)
        elif isinstance(node, RexCall | RexSpecial):
            stack.extend(node.operands)
    return found


def shift(node: RexNode, mapping: Callable[[int], int]) -> RexNode:
    """``node`` with every input reference renumbered by ``mapping``."""
    if isinstance(node, RexInputRef):
        return RexInputRef(mapping(node.index), node.type, node.name)
    if isinstance(node, RexCall):
        return RexCall(node.name, node.function, tuple(shift(o, mapping) for o in node.operands), node.type)
    if isinstance(node, RexSpecial):
        return RexSpecial(node.kind, tuple(shift(o, mapping) for o in node.operands), node.type)
    return node
