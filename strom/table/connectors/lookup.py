"""Flink's ``LookupTableSource``: a table source that can look rows up by key (the right side of a lookup join,
``JOIN t FOR SYSTEM_TIME AS OF o.proc_time``), its ``LookupFunction`` and the ``lookup.cache`` options.

A connector that supports lookups (e.g. ``jdbc``) makes its source a :class:`LookupTableSource` too: the planner
calls :meth:`LookupTableSource.get_lookup_runtime_provider` with the columns the join's equality condition binds
(:class:`LookupContext`), and the operator calls the returned :class:`LookupFunction`'s ``lookup(keys)`` once per
left row (behind a :class:`~strom.table.runtime.lookup_cache.LookupCache` when the table asks for one). Both the
provider and the function are pickled into the job: keep connections out of ``__init__`` and open them in ``open``.
:class:`InMemoryLookupTableSource` looks rows up in a Python list (Flink's test ``values`` source).
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from strom.table.connectors.base import DynamicTableSource
from strom.table.errors import ValidationException

if TYPE_CHECKING:
    from strom.api.datastream import DataStream
    from strom.api.environment import StreamExecutionEnvironment
    from strom.table.planner.logical import RowType

__all__ = [
    "InMemoryLookupTableSource",
    "LookupCacheOptions",
    "LookupContext",
    "LookupFunction",
    "LookupFunctionProvider",
    "LookupTableSource",
    "parse_duration_ms",
]

_UNITS = {"ms": 1, "s": 1000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}
_DURATION = re.compile(r"^\s*(\d+)\s*(ms|s|min|h|d)?\s*$")


def parse_duration_ms(text: str) -> int:
    """Flink's duration option (``10s``, ``5 min``, ``100ms``; a bare number is milliseconds)."""
    found = _DURATION.match(text.lower().replace("sec", "s").replace("mins", "min"))
    if found is None:
        raise ValidationException(f"expected a duration such as '10 s', '5 min' or '100 ms'; got '{text}'")
    return int(found.group(1)) * _UNITS[found.group(2) or "ms"]


@dataclass(frozen=True, slots=True)
class LookupContext:
    """``keys``: the table's columns (indices of its physical row) the join binds, in the join's order."""

    keys: tuple[int, ...]


class LookupFunction(ABC):
    """Flink's ``LookupFunction``: the rows of the table whose key columns equal ``keys`` (a tuple of values in
    :class:`LookupContext` order; never containing NULL). Rows are tuples of the table's physical columns."""

    def open(self) -> None:
        """Called once per subtask before the first lookup (open connections here)."""

    def close(self) -> None:
        """Called once per subtask at the end."""

    @abstractmethod
    def lookup(self, keys: tuple[Any, ...]) -> Sequence[tuple[Any, ...]]: ...


@dataclass(frozen=True, slots=True)
class LookupCacheOptions:
    """``'lookup.cache' = 'PARTIAL'`` with ``lookup.partial-cache.max-rows``, ``…expire-after-write`` /
    ``…expire-after-access`` (ms; None: never) and ``…cache-missing-key`` (Flink's ``DefaultLookupCache``)."""

    max_rows: int | None = None
    expire_after_write: int | None = None
    expire_after_access: int | None = None
    cache_missing_key: bool = True

    @staticmethod
    def from_options(options: Mapping[str, str]) -> LookupCacheOptions | None:
        """The cache a table's WITH options ask for, or None (``'lookup.cache' = 'NONE'``, the default)."""
        mode = options.get("lookup.cache", "NONE").upper()
        if mode == "NONE":
            return None
        if mode != "PARTIAL":
            raise ValidationException(
                f"expected 'lookup.cache' = 'NONE' or 'PARTIAL'; got '{mode}' (FULL caching is not supported)"
            )
        prefix = "lookup.partial-cache."
        rows = options.get(prefix + "max-rows")
        write, access = options.get(prefix + "expire-after-write"), options.get(prefix + "expire-after-access")
        return LookupCacheOptions(
            max_rows=int(rows) if rows is not None else None,
            expire_after_write=parse_duration_ms(write) if write is not None else None,
            expire_after_access=parse_duration_ms(access) if access is not None else None,
            cache_missing_key=options.get(prefix + "cache-missing-key", "true").lower() == "true",
        )


@dataclass(frozen=True, slots=True)
class LookupFunctionProvider:
    """Flink's ``LookupFunctionProvider`` / ``PartialCachingLookupProvider``: the function and its cache."""

    function: LookupFunction
    cache: LookupCacheOptions | None = None


class LookupTableSource(ABC):
    """A source that can look rows up (Flink's ``LookupTableSource``); mix it into a ``DynamicTableSource``."""

    @abstractmethod
    def get_lookup_runtime_provider(self, context: LookupContext) -> LookupFunctionProvider: ...


class _ListLookupFunction(LookupFunction):
    def __init__(self, rows: Sequence[tuple[Any, ...]], keys: tuple[int, ...]) -> None:
        self.rows = [tuple(r) for r in rows]
        self.keys = keys
        self.calls = 0

    def open(self) -> None:
        self.index: dict[tuple[Any, ...], list[tuple[Any, ...]]] = {}
        for row in self.rows:
            self.index.setdefault(tuple(row[k] for k in self.keys), []).append(row)

    def lookup(self, keys: tuple[Any, ...]) -> Sequence[tuple[Any, ...]]:
        self.calls += 1
        return self.index.get(keys, [])


class InMemoryLookupTableSource(DynamicTableSource, LookupTableSource):
    """A lookup-only table over rows held in memory (tests; Flink's ``values`` connector with lookups)."""

    def __init__(self, rows: Sequence[tuple[Any, ...]], options: Mapping[str, str] | None = None) -> None:
        self.rows = [tuple(r) for r in rows]
        self.cache = LookupCacheOptions.from_options(options or {})

    def get_lookup_runtime_provider(self, context: LookupContext) -> LookupFunctionProvider:
        return LookupFunctionProvider(_ListLookupFunction(self.rows, context.keys), self.cache)

    def create_stream(self, env: StreamExecutionEnvironment, row_type: RowType) -> DataStream[Any]:
        """Scanned, the rows as a bounded insert-only stream."""
        from strom.api.row import _create_row

        return env.from_collection([_create_row(None, list(r)) for r in self.rows]).name("InMemoryLookupTable")
