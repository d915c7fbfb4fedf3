"""Flink's ``JoinConditionWithNullFilters``: SQL's ``=`` on join keys never matches NULL.

The inputs of a join are keyed by their key tuples, so rows whose keys are both NULL meet in one key group; a key
column compared with ``=`` (Flink's ``JoinSpec.filterNulls``) makes such a row match nothing — an outer side is
padded as if no row matched. Only key pairs whose types are both nullable are checked. Flink 2.3 does this for
regular, semi / anti, interval and window joins (``fix_*_null`` facts); INTERSECT / EXCEPT compare NULLs equal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from strom.table.planner.logical import IntervalJoin, Join, WindowJoin

__all__ = ["JoinConditionWithNullFilters", "join_null_filter", "with_null_filters"]


class JoinConditionWithNullFilters:
    """``condition(left, right)`` (or TRUE) that is false when the left row has a NULL in ``left_keys`` (the right
    row has it too: both sides of a match share the key)."""

    def __init__(self, condition: Callable[[Any, Any], bool] | None, left_keys: tuple[int, ...]) -> None:
        self.condition = condition
        self.left_keys = left_keys

    def __call__(self, left: Any, right: Any) -> bool:
        values = left._values
        for i in self.left_keys:
            if values[i] is None:
                return False
        return self.condition is None or self.condition(left, right)


def join_null_filter(join: Join | IntervalJoin | WindowJoin) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A join's (left, right) key columns to check for NULL: none when its keys are null-safe (INTERSECT /
    EXCEPT), else the pairs where both columns are nullable (only there can NULL meet NULL)."""
    if getattr(join, "null_safe", False):
        return (), ()
    left_types, right_types = join.left.row_type.types, join.right.row_type.types
    pairs = [
        (lk, rk)
        for lk, rk in zip(join.left_keys, join.right_keys, strict=True)
        if left_types[lk].is_nullable and right_types[rk].is_nullable
    ]
    return tuple(lk for lk, _ in pairs), tuple(rk for _, rk in pairs)


def with_null_filters(
    join: IntervalJoin | WindowJoin, condition: Callable[[Any, Any], bool] | None
) -> Callable[[Any, Any], bool] | None:
    """A window join's ``condition(left, right)`` that also refuses NULL keys (unchanged when no key column can be
    NULL; the interval join skips NULL keys per row with ``filter_null_keys`` instead)."""
    left_keys, _ = join_null_filter(join)
    return JoinConditionWithNullFilters(condition, left_keys) if left_keys else condition
