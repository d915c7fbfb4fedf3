"""Flink's ``StreamingJoinOperator``: a regular (unbounded) equi-join of two changelogs over keyed state.

Each side keeps, per join key, a ``MapState`` from the row's values to ``[count, associations]`` (how often the
row is present and, for an outer side, how many rows of the other side it joins). The output follows Flink's
operator exactly: an inner side passes its input's kind (``+I``/``+U`` for an accumulating row, ``-D``/``-U`` for a
retraction); an outer side emits ``+I``/``-D``, pads with NULLs while nothing matches, and retracts the padded row
(``-D[null, other]``) when the first match arrives — and re-emits it (``+I[null, other]``) when the last one goes.
A residual non-equi condition decides which rows of the same key match; a NULL in a key compared with SQL's ``=``
matches nothing (INTERSECT / EXCEPT compare NULLs equal).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from strom.api.co_functions import KeyedCoProcessFunction
from strom.api.functions import KeyedProcessFunction, RuntimeContext
from strom.api.row import Row, RowKind, _create_row
from strom.api.state import MapStateDescriptor

__all__ = ["StreamingJoinFunction"]

_ACCUMULATE = (RowKind.INSERT, RowKind.UPDATE_AFTER)


class StreamingJoinFunction(KeyedCoProcessFunction[Any, Row, Row, Row]):
    """``kind``: INNER, LEFT, RIGHT or FULL; ``condition(joined_row)`` the residual predicate (or None)."""

    def __init__(
        self,
        kind: str,
        left_width: int,
        right_width: int,
        condition: Callable[[Row], bool] | None,
        null_filter: tuple[tuple[int, ...], tuple[int, ...]] = ((), ()),
    ) -> None:
        self.semi = kind in ("SEMI", "ANTI")
        self.anti = kind == "ANTI"
        self.left_outer = kind in ("LEFT", "FULL")
        self.right_outer = kind in ("RIGHT", "FULL")
        self.left_width = left_width
        self.right_width = right_width
        self.condition = condition
        # the (left, right) key columns compared with SQL's ``=``: a row with a NULL there matches no row (Flink's
        # ``JoinConditionWithNullFilters``); its outer side is padded as if nothing matched
        self.left_null_filter, self.right_null_filter = null_filter

    def open(self, runtime_context: RuntimeContext) -> None:
        self.left_state = runtime_context.get_map_state(MapStateDescriptor("left-records"))
        self.right_state = runtime_context.get_map_state(MapStateDescriptor("right-records"))

    def process_element1(self, value: Row, ctx: KeyedProcessFunction.Context) -> Iterator[Row] | None:
        return iter(self._process(value, True))

    def process_element2(self, value: Row, ctx: KeyedProcessFunction.Context) -> Iterator[Row] | None:
        return iter(self._process(value, False))

    def _joined(self, mine: tuple[Any, ...] | None, other: tuple[Any, ...] | None, is_left: bool, kind: RowKind) -> Row:
        left = mine if is_left else other
        right = other if is_left else mine
        values = [*(left if left is not None else (None,) * self.left_width)]
        values += [*(right if right is not None else (None,) * self.right_width)]
        return _create_row(None, values, kind)

    def _matches(
        self, record: tuple[Any, ...], other_state: Any, is_left: bool
    ) -> list[tuple[tuple[Any, ...], list[int]]]:
        found: list[tuple[tuple[Any, ...], list[int]]] = []
        for i in self.left_null_filter if is_left else self.right_null_filter:
            if record[i] is None:
                return found
        for other, counts in other_state.items():
            if self.condition is None or self.condition(self._joined(record, other, is_left, RowKind.INSERT)):
                found.append((other, counts))
        return found

    def _process_semi(self, row: Row, is_left: bool) -> list[Row]:
        """LEFT SEMI (``x IN (subquery)``, ``EXISTS``): a left row is out while at least one right row matches it;
        LEFT ANTI (``NOT EXISTS``): while none does (Flink's ``StreamingSemiAntiJoinOperator``)."""
        record = tuple(row._values)
        accumulate = row._row_kind in _ACCUMULATE
        out: list[Row] = []
        if is_left:
            matches = self._matches(record, self.right_state, True)
            entry = self.left_state.get(record) or [0, 0]
            entry[0] += 1 if accumulate else -1
            entry[1] = sum(c[0] for _, c in matches)
            if entry[0] <= 0:
                self.left_state.remove(record)
            else:
                self.left_state.put(record, entry)
            if bool(matches) != self.anti:
                out.append(_create_row(None, list(record), row._row_kind))
            return out
        entry = self.right_state.get(record) or [0, 0]
        entry[0] += 1 if accumulate else -1
        if entry[0] <= 0:
            self.right_state.remove(record)
        else:
            self.right_state.put(record, entry)
        for left, counts in self._matches(record, self.left_state, False):
            before = counts[1]
            counts[1] += 1 if accumulate else -1
            self.left_state.put(left, counts)
            first, gone = accumulate and before == 0, not accumulate and counts[1] == 0
            if first or gone:
                emitted = RowKind.INSERT if first != self.anti else RowKind.DELETE
                out.extend(_create_row(None, list(left), emitted) for _ in range(counts[0]))
        return out

    def _process(self, row: Row, is_left: bool) -> list[Row]:
        if self.semi:
            return self._process_semi(row, is_left)
        my_state, other_state = (self.left_state, self.right_state) if is_left else (self.right_state, self.left_state)
        input_outer, other_outer = (
            (self.left_outer, self.right_outer) if is_left else (self.right_outer, self.left_outer)
        )
        record = tuple(row._values)
        kind = row._row_kind
        matches = self._matches(record, other_state, is_left)
        out: list[Row] = []
        if kind in _ACCUMULATE:
            entry = my_state.get(record) or [0, 0]
            entry[0] += 1
            entry[1] = sum(c[0] for _, c in matches)
            my_state.put(record, entry)
            if not matches:
                if input_outer:
                    out.append(self._joined(record, None, is_left, RowKind.INSERT))
                return out
            out_kind = RowKind.INSERT if input_outer or other_outer else kind
            for other, counts in matches:
                if other_outer:
                    if counts[1] == 0:
                        out.extend(self._joined(None, other, is_left, RowKind.DELETE) for _ in range(counts[0]))
                    counts[1] += 1
                    other_state.put(other, counts)
                out.extend(self._joined(record, other, is_left, out_kind) for _ in range(counts[0]))
            return out
        entry = my_state.get(record)
        if entry is None:
            return out
        entry[0] -= 1
        if entry[0] <= 0:
            my_state.remove(record)
        else:
            my_state.put(record, entry)
        if not matches:
            if input_outer:
                out.append(self._joined(record, None, is_left, RowKind.DELETE))
            return out
        out_kind = RowKind.DELETE if input_outer or other_outer else kind
        for other, counts in matches:
            out.extend(self._joined(record, other, is_left, out_kind) for _ in range(counts[0]))
            if other_outer:
                if counts[1] == 1:
                    out.extend(self._joined(None, other, is_left, RowKind.INSERT) for _ in range(counts[0]))
                counts[1] -= 1
                other_state.put(other, counts)
        return out
