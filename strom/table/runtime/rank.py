"""Flink's Top-N functions (``AppendOnlyTopNFunction`` / ``RetractableTopNFunction``) for ROW_NUMBER.

Per partition key a ``ValueState`` holds the partition's rows in sort order (ties in arrival order). After each
change the operator compares the top N before and after:

- with the rank number in the output, each rank position whose row changed emits ``-U[old, i]``/``+U[new, i]``,
  a new position ``+I[new, i]`` and a vanished one ``-D[old, i]`` (ascending ranks);
- without it, rows leaving the top N emit ``-D`` and rows entering it ``+I``; for the top 1 (deduplication) the
  change is an upsert by the partition key: ``+I`` first, then ``+U`` of the new first row (no ``-U``), as Flink
  emits it into a sink that takes upserts.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from strom.api.functions import KeyedProcessFunction, RuntimeContext
from strom.api.row import Row, RowKind, _create_row
from strom.api.state import ValueStateDescriptor
from strom.table.runtime.sort import SortKey

__all__ = ["RankFunction"]

_RETRACT = (RowKind.UPDATE_BEFORE, RowKind.DELETE)


class RankFunction(KeyedProcessFunction[Any, Row, Row]):
    def __init__(
        self,
        order: tuple[tuple[int, bool], ...],
        limit: int,
        output_rank: bool,
        offset: int = 0,
        update_before: bool = False,
        nulls_first: tuple[bool, ...] = (),
    ) -> None:
        """``update_before``: a deduplication on a time attribute (Flink's ``RowTimeDeduplicateFunction``) retracts
        the row it replaces with ``-U``; the other top-1 rankings upsert with ``+U`` alone, as Flink's."""
        self.update_before = update_before
        self.offset = offset
        self.order_columns = tuple(c for c, _ in order)
        self.ascending = tuple(a for _, a in order)
        self.nulls_first = nulls_first or self.ascending
        self.limit = limit
        self.output_rank = output_rank

    def open(self, runtime_context: RuntimeContext) -> None:
        self.rows_state = runtime_context.get_state(ValueStateDescriptor("sorted-rows"))

    def _key(self, values: tuple[Any, ...]) -> SortKey:
        return SortKey(tuple(values[c] for c in self.order_columns), self.ascending, self.nulls_first)

    def process_element(self, value: Row, ctx: KeyedProcessFunction.Context) -> Iterator[Row] | None:
        rows: list[tuple[Any, ...]] = self.rows_state.value() or []
        before = rows[self.offset : self.limit]
        record = tuple(value._values)
        if value._row_kind in _RETRACT:
            try:
                rows.remove(record)
            except ValueError:
                return None
        else:
            if not self.order_columns and len(rows) >= self.limit:
                return None  # LIMIT in arrival order: a row after the first ones never enters
            key = self._key(record)
            position = len(rows)
            while position > 0 and key < self._key(rows[position - 1]):
                position -= 1
            rows.insert(position, record)
        if rows:
            self.rows_state.update(rows)
        else:
            self.rows_state.clear()
        after = rows[self.offset : self.limit]
        return iter(self._changes(before, after))

    def _changes(self, before: list[tuple[Any, ...]], after: list[tuple[Any, ...]]) -> list[Row]:
        out: list[Row] = []
        if not self.output_rank and self.limit == 1:  # deduplication: an upsert by the partition key
            old = before[0] if before else None
            new = after[0] if after else None
            if old == new:
                return out
            if new is None:
                return [_create_row(None, [*old, None], RowKind.DELETE)]  # type: ignore[misc]
            if old is not None and self.update_before:
                return [
                    _create_row(None, [*old, None], RowKind.UPDATE_BEFORE),
                    _create_row(None, [*new, None], RowKind.UPDATE_AFTER),
                ]
            return [_create_row(None, [*new, None], RowKind.INSERT if old is None else RowKind.UPDATE_AFTER)]
        if not self.output_rank and not (self.offset and self.order_columns):  # with an OFFSET: per position
            remaining = list(after)
            for row in before:
                if row in remaining:
                    remaining.remove(row)
                else:
                    out.append(_create_row(None, [*row, None], RowKind.DELETE))
            out.extend(_create_row(None, [*row, None], RowKind.INSERT) for row in remaining)
            return out
        for i in range(max(len(before), len(after))):
            old = before[i] if i < len(before) else None
            new = after[i] if i < len(after) else None
            rank = i + 1
            if old == new:
                continue
            if old is None:
                out.append(_create_row(None, [*new, rank], RowKind.INSERT))  # type: ignore[misc]
            elif new is None:
                out.append(_create_row(None, [*old, rank], RowKind.DELETE))
            else:
                out.append(_create_row(None, [*old, rank], RowKind.UPDATE_BEFORE))
                out.append(_create_row(None, [*new, rank], RowKind.UPDATE_AFTER))
        return out
