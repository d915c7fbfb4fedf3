"""Flink's ``ExpandCodeGenerator`` output: each input row once per grouping set (a ``flat_map``), the grouping keys
not in the set NULL, the set's expand id ``$e`` appended; the row kind is kept, so a
retraction expands into the retractions of every set's row."""

from __future__ import annotations

from typing import Any

from strom.api.row import _create_row

__all__ = ["ExpandFunction", "ExpandIdLookup"]


class ExpandFunction:
    """``row → [row ++ keys-of-set ++ constants for each set]`` (picklable: plain data)."""

    def __init__(
        self, keys: tuple[int, ...], sets: tuple[frozenset[int], ...], constants: tuple[tuple[int, ...], ...]
    ) -> None:
        self.plans = tuple(
            (tuple(k if i in grouped else -1 for i, k in enumerate(keys)), list(constant))
            for grouped, constant in zip(sets, constants, strict=True)
        )

    def __call__(self, row: Any) -> list[Any]:
        values = row._values
        kind = row._row_kind
        return [
            _create_row(None, [*values, *[values[k] if k >= 0 else None for k in picks], *constant], kind)
            for picks, constant in self.plans
        ]


class ExpandIdLookup:
    """``GROUPING()`` / ``GROUPING_ID()`` of an expand id ``$e``: its value for each grouping set's id."""

    def __init__(self, values: dict[int, int]) -> None:
        self.values = values

    def __call__(self, expand_id: int) -> int:
        return self.values[expand_id]
