"""Partition pruning (Flink's ``PushPartitionIntoTableSourceScanRule`` with ``SupportsPartitionPushDown``): the
conjuncts of a Calc's filter over a table scan that read only the table's partition columns (with literals,
comparisons and deterministic built-ins) are handed to a source that supports it (``partition_indices`` and
``with_partition_filter``), which skips the files of the partitions they reject. The Calc still runs the whole
filter: pruning only saves reading, and a source that prunes nothing gives the same rows."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from strom.table.planner.codegen import compile_condition
from strom.table.planner.logical import Calc, RelNode, TableScan
from strom.table.planner.rex import RexCall, RexInputRef, RexLiteral, RexNode, RexSpecial, input_refs

__all__ = ["push_partition_filter"]

#: calls a partition filter may use: operators and deterministic built-ins (a UDF or RAND() is never pushed)
_PUSHABLE = frozenset(
    {
        "IN",
        "NOT IN",
        "LIKE",
        "NOT LIKE",
        "NOT",
        "CAST",
        "TRY_CAST",
        "UPPER",
        "LOWER",
        "SUBSTRING",
        "SUBSTR",
        "CONCAT",
        "TRIM",
        "CHAR_LENGTH",
        "DATE_FORMAT",
        "TO_DATE",
        "TO_TIMESTAMP",
        "IS TRUE",
        "IS FALSE",
        "IS NOT TRUE",
        "IS NOT FALSE",
    }
)


def push_partition_filter(rel: Calc) -> RelNode:
    """``rel.input``, or a scan of it whose source prunes partitions by ``rel.condition``'s partition conjuncts."""
    scan = rel.input
    if rel.condition is None or not isinstance(scan, TableScan):
        return scan
    source = scan.source
    partitions: tuple[int, ...] = getattr(source, "partition_indices", ())
    if not partitions:
        return scan
    pushed = [
        c
        for c in _conjuncts(rel.condition)
        if _pushable(c) and len(input_refs([c])) > 0 and input_refs([c]) <= set(partitions)
    ]
    if not pushed:
        return scan
    condition = pushed[0]
    for c in pushed[1:]:
        condition = RexSpecial("AND", (condition, c), c.type)
    return replace(scan, source=source.with_partition_filter(compile_condition(condition)))


def _conjuncts(node: RexNode) -> list[RexNode]:
    if isinstance(node, RexSpecial) and node.kind == "AND":
        return [c for o in node.operands for c in _conjuncts(o)]
    return [node]


def _pushable(node: Any) -> bool:
    if isinstance(node, RexInputRef | RexLiteral):
        return True
    if isinstance(node, RexSpecial):
        return all(_pushable(o) for o in node.operands)
    if isinstance(node, RexCall):
        operator = not any(ch.isalpha() for ch in node.name)
        return (operator or node.name in _PUSHABLE) and all(_pushable(o) for o in node.operands)
    return False
