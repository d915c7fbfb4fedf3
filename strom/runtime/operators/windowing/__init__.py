"""Runtime support of window operators (Flink's ``streaming.runtime.operators.windowing``). Internal."""

from __future__ import annotations

from strom.runtime.operators.windowing.merging_window_set import MergeFunction, MergingWindowSet

__all__ = ["MergeFunction", "MergingWindowSet"]
