"""Flink's ``LookupJoinRunner``: a processing-time temporal join against a lookup source. Each left row's key
values look up the table's rows (through the ``lookup.cache`` when configured) when the row arrives; each match
that passes the residual condition is emitted as ``left ++ right`` with the left row's kind, and a LEFT join pads
a left row without matches (or with a NULL key) with NULLs. Stateless: nothing is checkpointed."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from strom.api.functions import FlatMapFunction, RuntimeContext
from strom.api.row import Row, _create_row
from strom.table.connectors.lookup import LookupFunctionProvider
from strom.table.runtime.lookup_cache import LookupCache

__all__ = ["LookupJoinRunner"]


class LookupJoinRunner(FlatMapFunction[Row, Row]):
    """``left_keys``: the left columns bound to the lookup keys; ``right_width``: the table's width."""

    def __init__(
        self,
        provider: LookupFunctionProvider,
        left_keys: tuple[int, ...],
        right_width: int,
        left_outer: bool,
        condition: Callable[[Row], bool] | None,
    ) -> None:
        self.provider = provider
        self.left_keys = left_keys
        self.right_nulls = (None,) * right_width
        self.left_outer = left_outer
        self.condition = condition

    def open(self, runtime_context: RuntimeContext) -> None:
        self.function = self.provider.function
        self.function.open()
        options = self.provider.cache
        self.cache = LookupCache(options) if options is not None else None

    def close(self) -> None:
        self.function.close()

    def _rows(self, keys: tuple[Any, ...]) -> Any:
        if self.cache is None:
            return self.function.lookup(keys)
        rows = self.cache.get(keys)
        if rows is None:
            rows = list(self.function.lookup(keys))
            self.cache.put(keys, rows)
        return rows

    def flat_map(self, value: Row) -> Iterator[Row]:
        values = value._values
        keys = tuple(values[k] for k in self.left_keys)
        matched = False
        if None not in keys:
            for right in self._rows(keys):
                joined = _create_row(None, [*values, *right], value._row_kind)
                if self.condition is None or self.condition(joined):
                    matched = True
                    yield joined
        if not matched and self.left_outer:
            yield _create_row(None, [*values, *self.right_nulls], value._row_kind)
