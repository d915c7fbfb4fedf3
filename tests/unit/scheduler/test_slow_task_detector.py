"""``ExecutionTimeBasedSlowTaskDetector``: a running attempt is slow once enough of its vertex finished and it ran
longer than their median times the multiplier, and than the lower bound."""

from __future__ import annotations

from strom.runtime.scheduler.slow_task_detector import AttemptTiming, ExecutionTimeBasedSlowTaskDetector


def _t(subtask: int, start: int, end: int | None, vertex: str = "v", attempt: str = "") -> AttemptTiming:
    return AttemptTiming(
        vertex_id=vertex, subtask=subtask, attempt_id=attempt or f"{vertex}{subtask}", start_ms=start, end_ms=end
    )


def _detector(ratio: float = 0.75, multiplier: float = 1.5, lower_bound: int = 0) -> ExecutionTimeBasedSlowTaskDetector:
    return ExecutionTimeBasedSlowTaskDetector(
        baseline_ratio=ratio, baseline_multiplier=multiplier, baseline_lower_bound_ms=lower_bound
    )


def test_no_baseline_before_the_ratio_finished() -> None:
    attempts = [_t(0, 0, None), _t(1, 0, 100), _t(2, 0, None), _t(3, 0, None)]
    assert _detector().find_slow_tasks(attempts, {"v": 4}, now_ms=10_000) == []


def test_slow_past_median_times_multiplier() -> None:
    attempts = [_t(0, 0, None), _t(1, 0, 100), _t(2, 0, 200), _t(3, 0, 300)]
    detector = _detector()
    assert detector.find_slow_tasks(attempts, {"v": 4}, now_ms=300) == []  # baseline 1.5 × 200
    assert detector.find_slow_tasks(attempts, {"v": 4}, now_ms=301) == ["v0"]


def test_the_lower_bound_holds_a_fast_vertex_back() -> None:
    attempts = [_t(0, 0, None), _t(1, 0, 10), _t(2, 0, 10), _t(3, 0, 10)]
    assert _detector(lower_bound=60_000).find_slow_tasks(attempts, {"v": 4}, now_ms=59_000) == []
    assert _detector(lower_bound=60_000).find_slow_tasks(attempts, {"v": 4}, now_ms=60_001) == ["v0"]


def test_a_subtask_with_a_finished_attempt_is_not_slow_and_vertices_are_apart() -> None:
    attempts = [
        _t(0, 0, None, attempt="slow-original"),
        _t(0, 50, 120, attempt="speculative"),  # finished: its subtask is done
        _t(1, 0, 100),
        _t(0, 0, None, vertex="w"),  # another vertex, none of it finished: no baseline
    ]
    assert _detector(ratio=0.5).find_slow_tasks(attempts, {"v": 2, "w": 2}, now_ms=10_000) == []
