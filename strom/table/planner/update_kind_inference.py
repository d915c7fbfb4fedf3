"""The part of Flink's ``SatisfyUpdateKindTraitVisitor`` an upsert sink needs: whether its input must carry
UPDATE_BEFORE rows.

An upsert sink asks for ``ONLY_UPDATE_AFTER``; Flink's planner then never generates ``-U`` rows — except that a
Calc with a filter cannot satisfy ``ONLY_UPDATE_AFTER`` (FLINK-9528: ``WHERE cnt < 10`` after an aggregation must
see the old row leave), so below such a filter the plan keeps ``-U`` and the sink gets them (``upsert-kafka`` writes
each as a tombstone). strom always generates ``-U``; a sink that drops them asks this module whether Flink would
have sent them.
"""

from __future__ import annotations

from strom.table.planner.changelog import is_insert_only
from strom.table.planner.logical import Calc, RelNode, Union, WatermarkAssigner

__all__ = ["update_before_required"]


def update_before_required(plan: RelNode) -> bool:
    """True when Flink would send UPDATE_BEFORE rows into an upsert sink consuming ``plan``."""
    if is_insert_only(plan):
        return False
    if isinstance(plan, Calc):
        return plan.condition is not None or update_before_required(plan.input)
    if isinstance(plan, WatermarkAssigner):
        return update_before_required(plan.input)
    if isinstance(plan, Union):
        return any(update_before_required(m) for m in plan.members)
    return False
