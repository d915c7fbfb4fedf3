"""A Calc whose calls of one kind run per batch (Flink's ``PythonCalcSplitRule`` / ``AsyncCalcSplitRule``).

Flink splits a Calc holding Python (pandas) or async scalar functions in two: the calls become their own operator,
and the rest of the Calc reads their results as columns appended to the input row. :func:`split_calls` is that
rule for calls a predicate picks; :class:`BatchCallCalcOperator` runs them for a whole strom batch
(:meth:`~BatchCallCalcOperator.call_results`: the pandas operator once per call with Series, the async one
concurrently on the event loop), then the rest of the Calc per row over the row with the results appended.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from strom.runtime.streamrecord import timestamps_of, with_timestamps
from strom.table.planner.codegen import compile_calc, compile_projection
from strom.table.planner.rex import RexCall, RexInputRef, RexNode, RexSpecial
from strom.table.runtime.window.table_stream_operator import TableStreamOperator, make_row

__all__ = ["BatchCallCalcOperator", "split_calls"]


class _Nested(Exception):
    """A picked call inside another one's arguments: the Calc keeps its per-row path."""


def _holds(node: RexNode, picked: Callable[[RexCall], bool]) -> bool:
    if isinstance(node, RexCall) and picked(node):
        return True
    return any(_holds(o, picked) for o in getattr(node, "operands", ()))


def split_calls(
    projection: Sequence[RexNode] | None, condition: RexNode | None, arity: int, picked: Callable[[RexCall], bool]
) -> tuple[list[RexCall], tuple[RexNode, ...] | None, RexNode | None] | None:
    """``(picked calls, projection, condition)`` with each picked call replaced by the input column ``arity + i``;
    ``None`` when the Calc has no picked call or one is nested in another's arguments."""
    calls: list[RexCall] = []

    def rewrite(node: RexNode) -> RexNode:
        if isinstance(node, RexCall):
            if picked(node):
                if any(_holds(o, picked) for o in node.operands):
                    raise _Nested
                calls.append(node)
                return RexInputRef(arity + len(calls) - 1, node.type)
            return replace(node, operands=tuple(rewrite(o) for o in node.operands))
        if isinstance(node, RexSpecial):
            return replace(node, operands=tuple(rewrite(o) for o in node.operands))
        return node

    try:
        new_projection = None if projection is None else tuple(rewrite(p) for p in projection)
        new_condition = None if condition is None else rewrite(condition)
    except _Nested:
        return None
    return (calls, new_projection, new_condition) if calls else None


class BatchCallCalcOperator(TableStreamOperator, abc.ABC):
    """The split-off calls of a batch (:meth:`call_results`), then the rest of the Calc per row."""

    def __init__(self, calls: Sequence[RexCall], projection: Sequence[RexNode] | None, condition: RexNode | None):
        super().__init__()
        self.functions = [c.function for c in calls]
        self.arguments = [compile_projection(c.operands) for c in calls]
        self.filtered = condition is not None
        self.calc: Callable[[Any], Any] = compile_calc(projection, condition)

    @abc.abstractmethod
    def call_results(self, batch: list[Any]) -> list[list[Any]]:
        """Per split-off call, its results for the rows of ``batch`` in order."""

    def process_batch(self, batch: list[Any]) -> None:
        self._records_in += len(batch)
        if not batch:
            return
        results = self.call_results(batch)
        stamps = timestamps_of(batch)
        calc, out = self.calc, []
        out_stamps: list[Any] = []
        for i, row in enumerate(batch):
            extended = make_row([*row._values, *(r[i] for r in results)], None, row._row_kind)
            if self.filtered:
                for value in calc(extended):
                    out.append(value)
                    out_stamps.append(None if stamps is None else stamps[i])
            else:
                out.append(calc(extended))
        if not self.filtered:
            out_stamps = list(stamps) if stamps is not None else []
        if out:
            self.output.emit(with_timestamps(out, out_stamps if stamps is not None else None))
