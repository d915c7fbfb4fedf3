"""Flink's ``DynamicSourceUtils.validateScanSource`` for BATCH mode: every scanned table must be bounded (a
``kafka`` table without ``scan.bounded.mode``, a ``datagen`` table without ``number-of-rows`` is not)."""

from __future__ import annotations

from strom.table.errors import ValidationException
from strom.table.planner.logical import RelNode, TableScan

__all__ = ["check_bounded_scans"]


def check_bounded_scans(plan: RelNode) -> None:
    """Refuses ``plan`` in BATCH mode when it scans an unbounded table, with Flink's message."""
    stack = [plan]
    while stack:
        rel = stack.pop()
        if isinstance(rel, TableScan) and not getattr(rel.source, "bounded", True):
            raise ValidationException(
                f"Querying an unbounded table '{rel.table_name}' in batch mode is not allowed. The table source is "
                "unbounded."
            )
        stack.extend(rel.inputs)
