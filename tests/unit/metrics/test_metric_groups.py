"""The metric groups, metrics and JobManager metrics — pure pieces, no cluster."""

from __future__ import annotations

import pytest

from strom.metrics import Counter, Distribution, Meter, MetricGroup
from strom.runtime.checkpoint.checkpoint_stats_tracker import CheckpointStatsSnapshot, CheckpointStatsTracker
from strom.runtime.checkpoint.coordinator import CheckpointStats
from strom.runtime.metrics.job_metrics import checkpoint_metrics
from strom.runtime.metrics.metric_group import GenericMetricGroup, MetricRegistry
from strom.runtime.metrics.metrics import DistributionView, GaugeView, MeterView, SimpleCounter
from strom.runtime.metrics.scope import OPERATOR_SCOPE, operator_scope, operator_variables, task_variables
from strom.runtime.metrics.task_io_metric_group import TaskIOMetricGroup


def operator_group(registry: MetricRegistry) -> GenericMetricGroup:
    task_vars = task_variables(
        host="h", tm_id="tm-1", job_id="j1", job_name="job", task_id="v1", task_attempt_id="a1",
        task_name="Source: s -> map", subtask_index=1, task_attempt_num=0,
    )  # fmt: skip
    v = operator_variables(task_vars, operator_id="op1", operator_name="map")
    return GenericMetricGroup(
        registry, scope=operator_scope(v), logical_scope=OPERATOR_SCOPE, variables=v, query_prefix="map."
    )


@pytest.mark.timeout(10)
def test_group_scope_identifier_and_user_variables() -> None:
    group = operator_group(MetricRegistry())
    assert isinstance(group, MetricGroup)
    assert group.get_scope_components() == ["h", "taskmanager", "tm-1", "job", "map", "1"]
    assert group.get_metric_identifier("records") == "h.taskmanager.tm-1.job.map.1.records"
    plain = group.add_group("mine")
    assert plain.get_metric_identifier("c") == "h.taskmanager.tm-1.job.map.1.mine.c"
    assert "<mine>" not in plain.get_all_variables()
    kv = group.add_group("kind", "even")
    assert kv.get_scope_components()[-2:] == ["kind", "even"]
    assert kv.get_all_variables()["<kind>"] == "even"
    assert kv.get_all_variables()["<operator_name>"] == "map"


@pytest.mark.timeout(10)
def test_metrics_register_in_the_task_registry_by_query_name() -> None:
    registry = MetricRegistry()
    group = operator_group(registry)
    c = group.counter("records")
    assert isinstance(c, Counter) and group.counter("records") is c  # the same one again
    m = group.meter("events", time_span_in_seconds=10)
    d = group.add_group("sizes").distribution("value")
    h = group.histogram("latency")
    assert isinstance(m, Meter) and isinstance(d, Distribution) and isinstance(h, Distribution)
    group.add_group("kind", "even").counter("seen").inc(3)
    group.gauge("last", lambda: 7)
    c.inc()
    c.inc(4)
    c.dec()
    m.mark_event(5)
    d.update(2)
    d.update(4)
    names = {e.query_name: e for e in registry.entries()}
    assert set(names) == {
        "map.records",
        "map.events",
        "map.sizes.value",
        "map.latency",
        "map.kind.even.seen",
        "map.last",
    }
    assert names["map.kind.even.seen"].logical_scope == (*OPERATOR_SCOPE, "kind")
    assert names["map.sizes.value"].logical_scope == (*OPERATOR_SCOPE, "sizes")
    task = TaskIOMetricGroup()
    task.registry = registry
    values = task.registered_values()
    assert values["map.records"] == 4 and values["map.kind.even.seen"] == 3 and values["map.last"] == 7
    assert values["map.events_count"] == 5 and values["map.events"] > 0
    assert values["map.sizes.value_count"] == 2 and values["map.sizes.value_mean"] == 3
    assert values["map.sizes.value_min"] == 2 and values["map.sizes.value_max"] == 4


@pytest.mark.timeout(10)
def test_a_failing_gauge_is_left_out_not_raised() -> None:
    registry = MetricRegistry()
    group = operator_group(registry)
    group.gauge("broken", lambda: 1 // 0)
    group.counter("ok").inc()
    task = TaskIOMetricGroup()
    task.registry = registry
    assert task.registered_values() == {"map.ok": 1.0}


@pytest.mark.timeout(10)
def test_bad_names_and_gauges_are_refused_with_a_hint() -> None:
    group = operator_group(MetricRegistry())
    with pytest.raises(ValueError, match="non-empty string"):
        group.counter("")
    with pytest.raises(TypeError, match="gauge function"):
        group.gauge("g", 5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="time span"):
        group.meter("m", time_span_in_seconds=0)


@pytest.mark.timeout(10)
def test_counter_meter_distribution_and_gauge_values() -> None:
    c = SimpleCounter()
    c.inc()
    c.inc(9)
    c.dec(2)
    assert c.get_count() == 8
    m = MeterView(60)
    t0 = m._history[0][0]
    m.mark_event(120)
    assert m.get_count() == 120
    assert m.get_rate(now=t0 + 2.0) == pytest.approx(60.0)
    m.mark_event(60)
    assert m.get_rate(now=t0 + 3.0) == pytest.approx(60.0)
    d = DistributionView(window=100)
    assert d.statistics()["count"] == 0 and d.statistics()["p99"] == 0
    for v in range(1, 101):
        d.update(v)
    s = d.statistics()
    assert s["count"] == 100 and s["min"] == 1 and s["max"] == 100 and s["mean"] == 50.5
    assert s["p50"] == pytest.approx(50.5) and s["p999"] == pytest.approx(99.901)
    assert GaugeView(lambda: True).get_value() == 1.0
    assert GaugeView(lambda: None).get_value() == 0.0
    assert GaugeView(lambda: "text").get_value() == 0.0


def stats(cid: int, status: str, *, size: int = 100, duration: int | None = 10, ts: int = 1000) -> CheckpointStats:
    return CheckpointStats(
        checkpoint_id=cid, status=status, is_savepoint=False, trigger_timestamp_ms=ts, duration_ms=duration,
        state_size=size,
    )  # fmt: skip


@pytest.mark.timeout(10)
def test_checkpoint_metrics_follow_flinks_names_and_defaults() -> None:
    none = checkpoint_metrics(CheckpointStatsSnapshot())
    assert none["lastCheckpointDuration"] == -1 and none["lastCompletedCheckpointId"] == -1
    assert none["numberOfCompletedCheckpoints"] == 0 and none["lastCheckpointRestoreTimestamp"] == -1
    history = [
        stats(1, "COMPLETED", size=10, duration=5),
        stats(2, "FAILED"),
        stats(3, "COMPLETED", size=30, duration=7, ts=2000),
        stats(4, "IN_PROGRESS", duration=None),
    ]
    tracker = CheckpointStatsTracker()
    for st in history:  # as the coordinator reports them: triggered, then completed or failed
        tracker.report(stats(st.checkpoint_id, "IN_PROGRESS", duration=None, ts=st.trigger_timestamp_ms))
        if st.status != "IN_PROGRESS":
            tracker.report(st)
    m = checkpoint_metrics(tracker.snapshot(), restore_timestamp_ms=1234)
    assert m == {
        "lastCheckpointDuration": 7.0,
        "lastCheckpointSize": 30.0,
        "lastCheckpointFullSize": 30.0,
        "lastCompletedCheckpointId": 3.0,
        "lastCheckpointCompletedTimestamp": 2007.0,
        "lastCheckpointRestoreTimestamp": 1234.0,
        "numberOfInProgressCheckpoints": 1.0,
        "numberOfCompletedCheckpoints": 2.0,
        "numberOfFailedCheckpoints": 1.0,
        "totalNumberOfCheckpoints": 4.0,
    }
