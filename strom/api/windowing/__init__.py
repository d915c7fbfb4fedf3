"""Windowing: windows, window assigners, triggers and evictors (Flink's ``streaming.api.windowing``).

The pure, runtime-independent half of Flink's windows: which windows an element belongs to
(:mod:`~strom.api.windowing.assigners`), when a pane fires (:mod:`~strom.api.windowing.triggers`) and
what is dropped from it (:mod:`~strom.api.windowing.evictors`). Times are ints of milliseconds;
arguments that Flink takes as a ``Duration`` also accept a ``datetime.timedelta``.

    >>> from datetime import timedelta
    >>> assigner = TumblingEventTimeWindows.of(timedelta(seconds=5))
    >>> assigner, assigner.get_default_trigger()
    (TumblingEventTimeWindows(5000), EventTimeTrigger())
"""

from __future__ import annotations

from strom.api.windowing.assigners import (
    DynamicEventTimeSessionWindows,
    DynamicProcessingTimeSessionWindows,
    EventTimeSessionWindows,
    GlobalWindows,
    MergeCallback,
    MergingWindowAssigner,
    ProcessingTimeSessionWindows,
    SessionWindowTimeGapExtractor,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    WindowAssigner,
    WindowAssignerContext,
    WindowStagger,
)
from strom.api.windowing.evictors import (
    CountEvictor,
    DeltaEvictor,
    DeltaFunction,
    Evictor,
    EvictorContext,
    TimeEvictor,
)
from strom.api.windowing.triggers import (
    ContinuousEventTimeTrigger,
    ContinuousProcessingTimeTrigger,
    CountTrigger,
    EndOfStreamTrigger,
    EventTimeTrigger,
    NeverTrigger,
    OnMergeContext,
    ProcessingTimeTrigger,
    PurgingTrigger,
    Trigger,
    TriggerContext,
    TriggerResult,
)
from strom.api.windowing.windows import CountWindow, GlobalWindow, TimestampedValue, TimeWindow, Window

__all__ = [
    "ContinuousEventTimeTrigger",
    "ContinuousProcessingTimeTrigger",
    "CountEvictor",
    "CountTrigger",
    "CountWindow",
    "DeltaEvictor",
    "DeltaFunction",
    "DynamicEventTimeSessionWindows",
    "DynamicProcessingTimeSessionWindows",
    "EndOfStreamTrigger",
    "EventTimeSessionWindows",
    "EventTimeTrigger",
    "Evictor",
    "EvictorContext",
    "GlobalWindow",
    "GlobalWindows",
    "MergeCallback",
    "MergingWindowAssigner",
    "NeverTrigger",
    "OnMergeContext",
    "ProcessingTimeSessionWindows",
    "ProcessingTimeTrigger",
    "PurgingTrigger",
    "SessionWindowTimeGapExtractor",
    "SlidingEventTimeWindows",
    "SlidingProcessingTimeWindows",
    "TimeEvictor",
    "TimeWindow",
    "TimestampedValue",
    "Trigger",
    "TriggerContext",
    "TriggerResult",
    "TumblingEventTimeWindows",
    "TumblingProcessingTimeWindows",
    "Window",
    "WindowAssigner",
    "WindowAssignerContext",
    "WindowStagger",
]
