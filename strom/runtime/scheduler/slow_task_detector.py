"""``ExecutionTimeBasedSlowTaskDetector``: which running task attempts of a BATCH job are slow (Flink's class of that
name, without its input-bytes weighting).

A job vertex has a baseline once ``baseline_ratio`` of its subtasks finished: the median execution time of its finished
subtasks times ``baseline_multiplier``, at least ``baseline_lower_bound``. An attempt of a vertex with a baseline that
has been executing (since it was deployed) for longer than the baseline is slow. Pure: times in, attempt ids out.

>>> detector = ExecutionTimeBasedSlowTaskDetector(
...     baseline_ratio=0.5, baseline_multiplier=2.0, baseline_lower_bound_ms=0
... )
>>> done = [AttemptTiming(vertex_id="v", subtask=i, attempt_id=f"a{i}", start_ms=0, end_ms=100) for i in (1, 2)]
>>> slow = AttemptTiming(vertex_id="v", subtask=0, attempt_id="a0", start_ms=0, end_ms=None)
>>> detector.find_slow_tasks(done + [slow], {"v": 3}, now_ms=250)
['a0']
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["AttemptTiming", "ExecutionTimeBasedSlowTaskDetector"]


@dataclass(frozen=True, slots=True, kw_only=True)
class AttemptTiming:
    """One attempt: when it was deployed and, if it finished, when (epoch ms)."""

    vertex_id: str
    subtask: int
    attempt_id: str
    start_ms: int
    end_ms: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ExecutionTimeBasedSlowTaskDetector:
    baseline_ratio: float
    baseline_multiplier: float
    baseline_lower_bound_ms: int

    def baseline_ms(self, finished_times: list[int], parallelism: int) -> float | None:
        """The vertex's baseline, or ``None`` while fewer than ``baseline_ratio`` of its subtasks finished."""
        if not finished_times or len(finished_times) < self.baseline_ratio * parallelism:
            return None
        return max(statistics.median(finished_times) * self.baseline_multiplier, self.baseline_lower_bound_ms)

    def find_slow_tasks(self, attempts: Iterable[AttemptTiming], parallelism: dict[str, int], now_ms: int) -> list[str]:
        """The ids of the unfinished ``attempts`` that are slow at ``now_ms`` (finished ones give the baselines; a
        subtask counts once, by its first finished attempt)."""
        finished: dict[str, dict[int, int]] = defaultdict(dict)
        running: list[AttemptTiming] = []
        for a in attempts:
            if a.end_ms is None:
                running.append(a)
            else:
                finished[a.vertex_id].setdefault(a.subtask, a.end_ms - a.start_ms)
        slow = []
        for a in running:
            if a.subtask in finished[a.vertex_id]:
                continue  # another attempt of it finished
            baseline = self.baseline_ms(list(finished[a.vertex_id].values()), parallelism[a.vertex_id])
            if baseline is not None and now_ms - a.start_ms > baseline:
                slow.append(a.attempt_id)
        return slow
