"""PyFlink's ``ExplainDetail``: extra details ``explain()`` may show (accepted; strom's plan text has one form)."""

from __future__ import annotations

import enum

__all__ = ["ExplainDetail"]


class ExplainDetail(enum.Enum):
    ESTIMATED_COST = 0
    CHANGELOG_MODE = 1
    JSON_EXECUTION_PLAN = 2
    PLAN_ADVICE = 3
