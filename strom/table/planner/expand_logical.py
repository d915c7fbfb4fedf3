"""The plan node of Flink's ``Expand`` (``StreamPhysicalExpand`` / ``BatchPhysicalExpand``): each input row once per
grouping set, for the aggregate of GROUPING SETS / ROLLUP / CUBE (planner/grouping_sets.py plans it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from strom.table.planner.logical import RelNode, RowType

__all__ = ["Expand", "explain_expand"]


@dataclass(frozen=True, slots=True, eq=False)
class Expand:
    """Output = the input's columns, then the grouping keys (NULL where not in the set), then the set's constants
    (its expand id ``$e``); one output row per set and input row, in the sets' order."""

    row_type: RowType
    input: RelNode
    keys: tuple[int, ...]  # input columns of the grouping keys
    sets: tuple[frozenset[int], ...]  # per set: the positions in ``keys`` it groups by
    constants: tuple[tuple[int, ...], ...]  # per set: its expand id $e

    @property
    def inputs(self) -> tuple[RelNode, ...]:
        return (self.input,)


def explain_expand(node: Expand) -> str:
    """Flink's ``Expand(projects=[{a, b, 0 AS $e}, {a, null AS b, 1 AS $e}, …])``."""
    names = node.row_type.names
    width = len(node.input.row_type)
    projects = []
    for grouped, constants in zip(node.sets, node.constants, strict=True):
        keys = [names[width + i] if i in grouped else f"null AS {names[width + i]}" for i in range(len(node.keys))]
        extra = [f"{c} AS {n}" for c, n in zip(constants, names[width + len(node.keys) :], strict=True)]
        projects.append("{" + ", ".join([*keys, *extra]) + "}")
    return f"projects=[{', '.join(projects)}]"
