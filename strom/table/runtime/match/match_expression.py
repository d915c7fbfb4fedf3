"""A ``DEFINE`` condition or a ``MEASURES`` expression evaluated over the rows of a (partial) match (Flink's
``MatchCodeGenerator``): the planner replaces each pattern navigation (``A.price`` = ``LAST(A.price)``,
``FIRST(A.price, n)``, ``LAST(A.price, n)``), aggregate over a variable (``AVG(A.price)``) and ``MATCH_ROWTIME()``
by a *slot*; at run time the slots are computed from the match's rows into one row, and the expression — compiled
by the planner's code generator like any Calc — is evaluated over it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from strom.api.row import Row, _create_row
from strom.table.runtime.match.nfa import MatchView

__all__ = ["MatchExpression", "Slot"]


@dataclass(frozen=True, slots=True)
class Slot:
    """``kind`` NAV (``variable``'s row ``offset`` from the ``first``/last, column ``column``), AGG (aggregate
    ``name`` of ``column`` over ``variable``'s rows, its argument type ``arg_type``) or ROWTIME (the last row's
    rowtime, column ``column``). ``variable`` None: all rows of the match."""

    kind: str
    variable: int | None = None
    column: int = 0
    first: bool = False
    offset: int = 0
    name: str = ""
    arg_type: Any = None


class MatchExpression:
    """``expression(view)`` → the value (``condition=True``: whether it is TRUE)."""

    def __init__(self, slots: Sequence[Slot], compiled: Callable[[Row], list[Any]], condition: bool = False) -> None:
        self.slots = tuple(slots)
        self.compiled = compiled
        self.condition = condition
        self._aggregates: dict[int, Any] = {}

    def __getstate__(self) -> dict[str, Any]:
        return {"slots": self.slots, "compiled": self.compiled, "condition": self.condition}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.slots, self.compiled, self.condition = state["slots"], state["compiled"], state["condition"]
        self._aggregates = {}

    def __call__(self, view: MatchView) -> Any:
        values = [self._slot(i, slot, view) for i, slot in enumerate(self.slots)]
        result = self.compiled(_create_row(None, values))[0]
        return result is True if self.condition else result

    def _slot(self, index: int, slot: Slot, view: MatchView) -> Any:
        if slot.kind == "ROWTIME":
            return view.last_row()._values[slot.column]
        rows = view.rows(slot.variable)
        if slot.kind == "NAV":
            position = slot.offset if slot.first else len(rows) - 1 - slot.offset
            return rows[position]._values[slot.column] if 0 <= position < len(rows) else None
        function = self._aggregates.get(index)
        if function is None:
            from strom.table.functions.aggregate_functions import resolve_aggregate

            arg_types = [slot.arg_type] if slot.arg_type is not None else []
            function = resolve_aggregate(slot.name, arg_types, retracting=False).function
            self._aggregates[index] = function
        acc = function.create_accumulator()
        for row in rows:
            acc = function.accumulate(acc, row._values[slot.column] if slot.arg_type is not None else None)
        return function.get_value(acc)
