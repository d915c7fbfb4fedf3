"""The REST bodies Flink's dashboard reads of a vertex's subtasks and of the cluster's processes (issue 30 §3):
status durations and their percentiles, back-pressure levels, the checkpoint mode, applications, TaskManager
metrics, thread dumps and flame graphs — each as Flink writes it."""

from __future__ import annotations

import math
import os
from typing import Any

import pytest

from strom.runtime.metrics.process_metrics import status_metrics
from strom.runtime.taskexecutor.hardware_description import HardwareDescription
from strom.runtime.thread_info import sample_stacks, thread_dump
from strom.web.accessor import (
    CheckpointSettings,
    CheckpointSnapshot,
    JobSnapshot,
    SubtaskSnapshot,
    TaskManagerSnapshot,
    VertexSnapshot,
)
from strom.web.application_messages import application_details, application_exceptions, applications_overview
from strom.web.checkpoint_messages import checkpoint_config, task_checkpoint_statistics_with_subtasks
from strom.web.job_messages import (
    job_config_info,
    job_vertex_details,
    task_manager_details,
    task_managers_info,
    thread_dump_info,
    vertex_task_managers,
)
from strom.web.metric_messages import back_pressure_info
from strom.web.vertex_messages import (
    metrics_statistics,
    percentile,
    status_duration,
    subtasks_accumulators,
    vertex_accumulators,
    vertex_flame_graph,
)


def subtask(i: int, state: str = "RUNNING", **metrics: float) -> SubtaskSnapshot:
    return SubtaskSnapshot(subtask=i, attempt=0, state=state, task_manager_id="tm-1", endpoint="h:1", metrics=metrics)


def vertex(*subtasks: SubtaskSnapshot) -> VertexSnapshot:
    return VertexSnapshot(
        id="a" * 32, name="v", parallelism=len(subtasks), max_parallelism=128, slot_sharing_group="default",
        inputs=(), subtasks=subtasks,
    )  # fmt: skip


SETTINGS = CheckpointSettings(
    interval_ms=1000, timeout_ms=600_000, min_pause_ms=0, max_concurrent=1, tolerable_failures=0, exactly_once=True,
    unaligned=False, retention="NO_EXTERNALIZED_CHECKPOINTS", num_retained=1, storage="file:///cp",
    state_backend="hashmap",
)  # fmt: skip


def job(*vertices: VertexSnapshot, **kw: Any) -> JobSnapshot:
    fields: dict[str, Any] = dict(
        job_id="f" * 32, name="j", state="RUNNING", start_time_ms=1000, end_time_ms=-1, vertices=vertices,
        exceptions=(), checkpointing=SETTINGS, checkpoints=(), batch=False,
    )  # fmt: skip
    fields.update(kw)
    return JobSnapshot(**fields)


pytestmark = pytest.mark.timeout(30)

STATS_KEYS = {"min", "max", "avg", "sum", "median", "p25", "p75", "p95"}


def timed(i: int, state: str, entered: dict[str, int], left: dict[str, int], **metrics: float) -> SubtaskSnapshot:
    return SubtaskSnapshot(
        subtask=i,
        attempt=0,
        state=state,
        task_manager_id=f"tm-{i % 2 + 1}",
        endpoint="h:1",
        metrics=metrics,
        attempt_id=f"{i:032x}",
        state_timestamps=entered,
        state_end_timestamps=left,
    )


def test_percentile_is_commons_math_legacy_estimation() -> None:
    assert math.isnan(percentile([], 50))
    assert percentile([7], 95) == 7
    assert percentile([1, 2, 3, 4], 50) == 2.5  # pos = 0.5 * 5 = 2.5: between the 2nd and 3rd
    assert percentile([1, 2, 3, 4], 25) == 1.25
    assert percentile([1, 2, 3, 4], 95) == 4  # pos 4.75 >= n: the maximum
    assert percentile([10, 20, 30], 10) == 10  # pos 0.4 < 1: the minimum
    assert metrics_statistics([]) == dict.fromkeys(STATS_KEYS, 0)
    assert metrics_statistics([1, 2, 3, 4]) == {
        "min": 1, "max": 4, "avg": 2, "sum": 10, "median": 2, "p25": 1, "p75": 3, "p95": 4,
    }  # fmt: skip


def test_status_duration_per_subtask_and_aggregated() -> None:
    running = timed(
        0,
        "RUNNING",
        {"CREATED": 1000, "SCHEDULED": 1100, "DEPLOYING": 1300, "INITIALIZING": 1600, "RUNNING": 2000},
        {"CREATED": 1100, "SCHEDULED": 1300, "DEPLOYING": 1600, "INITIALIZING": 2000},
        numRecordsIn=5,
        accumulatedBusyTimeMs=40,
    )
    created = timed(1, "CREATED", {"CREATED": 1500}, {})
    assert status_duration(running, now=2500) == {
        "CREATED": 100, "SCHEDULED": 200, "DEPLOYING": 300, "INITIALIZING": 400, "RUNNING": 500,
    }  # fmt: skip
    assert status_duration(created, now=2500) == {
        "CREATED": 1000, "SCHEDULED": -1, "DEPLOYING": -1, "INITIALIZING": -1, "RUNNING": -1,
    }  # fmt: skip
    body = job_vertex_details(job(vertex(running, created)), vertex(running, created))
    first, second = body["subtasks"]
    assert set(first["status-duration"]) == {"CREATED", "SCHEDULED", "DEPLOYING", "INITIALIZING", "RUNNING"}
    assert first["start-time"] == 1300 and first["end-time"] == -1 and first["duration"] > 0
    assert second["start-time"] == -1 and second["duration"] == -1
    aggregated = body["aggregated"]
    assert set(aggregated["status-duration"]) == {"CREATED", "SCHEDULED", "DEPLOYING", "INITIALIZING", "RUNNING"}
    for stats in aggregated["status-duration"].values():
        assert set(stats) == STATS_KEYS
    assert aggregated["status-duration"]["SCHEDULED"]["min"] == -1
    assert aggregated["status-duration"]["SCHEDULED"]["max"] == 200
    assert set(aggregated["metrics"]) == {
        "read-bytes", "write-bytes", "read-records", "write-records",
        "accumulated-backpressured-time", "accumulated-busy-time", "accumulated-idle-time",
    }  # fmt: skip
    assert aggregated["metrics"]["read-records"] == {
        "min": 0, "max": 5, "avg": 2, "sum": 5, "median": 2, "p25": 0, "p75": 5, "p95": 5,
    }  # fmt: skip
    assert aggregated["metrics"]["accumulated-busy-time"]["max"] == 40


def test_subtask_times_for_the_timeline() -> None:
    from strom.web.vertex_messages import subtasks_times

    done = timed(0, "FINISHED", {"SCHEDULED": 5, "DEPLOYING": 10, "FINISHED": 90}, {"SCHEDULED": 10, "DEPLOYING": 90})
    body = subtasks_times(vertex(done), 100)
    assert body["now"] == 100
    assert body["subtasks"] == [
        {"subtask": 0, "host": "h", "duration": 85, "timestamps": {"SCHEDULED": 5, "DEPLOYING": 10, "FINISHED": 90}}
    ]


def test_a_finished_subtask_ends_when_it_reached_its_terminal_state() -> None:
    done = timed(0, "FINISHED", {"DEPLOYING": 10, "RUNNING": 20, "FINISHED": 90}, {"DEPLOYING": 20, "RUNNING": 90})
    details = job_vertex_details(job(vertex(done)), vertex(done))
    (entry,) = details["subtasks"]
    assert (entry["start-time"], entry["end-time"], entry["duration"]) == (10, 90, 80)
    assert entry["status-duration"]["RUNNING"] == 70


def test_back_pressure_level_in_both_spellings() -> None:
    body = back_pressure_info(vertex(subtask(0, backPressuredTimeMsPerSecond=600.0)))
    assert body["backpressureLevel"] == body["backpressure-level"] == "high"
    (s,) = body["subtasks"]
    assert s["backpressureLevel"] == s["backpressure-level"] == "high"


def test_checkpoint_mode_is_written_in_lower_case_as_flink_serializes_it() -> None:
    assert checkpoint_config(SETTINGS)["mode"] == "exactly_once"
    from dataclasses import replace

    assert checkpoint_config(replace(SETTINGS, exactly_once=False))["mode"] == "at_least_once"


def test_checkpoint_subtask_details() -> None:
    v = vertex(subtask(0), subtask(1))
    c = CheckpointSnapshot(
        id=3, status="COMPLETED", is_savepoint=False, unaligned=False, trigger_timestamp_ms=100, duration_ms=50,
        state_size=30, failure_reason="", external_path="/cp/chk-3",
        subtasks=((v.id, 1, {"state_size": 30.0, "sync_duration_ms": 2.0, "async_duration_ms": 7.0}),),
    )  # fmt: skip
    body = task_checkpoint_statistics_with_subtasks(job(v, checkpoints=(c,)), c, v.id)
    assert body["id"] == 3 and body["num_subtasks"] == 2 and body["state_size"] == 30
    assert set(body["summary"]) == {
        "checkpointed_size", "state_size", "end_to_end_duration", "checkpoint_duration", "alignment", "start_delay",
    }  # fmt: skip
    assert body["summary"]["checkpoint_duration"]["async"]["max"] == 7
    pending, done = body["subtasks"]
    assert pending == {"index": 0, "status": "pending_or_failed"}
    assert (
        done["status"] == "completed"
        and done["ack_timestamp"] == 150
        and done["checkpoint"]
        == {
            "sync": 2,
            "async": 7,
        }
    )


def test_applications_are_the_jobs() -> None:
    j = job(vertex(subtask(0)), name="app")
    (app,) = applications_overview([j])["applications"]
    assert app == {
        "id": j.job_id, "name": "app", "start-time": 1000, "end-time": -1, "duration": app["duration"],
        "status": "RUNNING", "jobs": {"RUNNING": 1},
    }  # fmt: skip
    details = application_details(j)
    assert details["status"] == "RUNNING" and [x["jid"] for x in details["jobs"]] == [j.job_id]
    assert set(details["timestamps"]) == {
        "CREATED", "RUNNING", "FAILING", "FAILED", "CANCELLING", "CANCELED", "FINISHED",
    }  # fmt: skip
    finished = job(vertex(subtask(0, "FINISHED")), state="FINISHED", end_time_ms=5000)
    assert application_details(finished)["end-time"] == 5000
    assert application_exceptions(j) == {"exceptionHistory": {"entries": []}}


def test_job_config_vertex_task_managers_and_accumulators() -> None:
    v = vertex(subtask(0), subtask(1))
    j = job(v, user_config={"k": "v", "db.password": "hunter2"})
    config = job_config_info(j)
    assert config["jid"] == j.job_id
    assert config["execution-config"]["user-config"] == {"k": "v", "db.password": "******"}  # Flink hides secrets
    assert config["execution-config"]["job-parallelism"] == 2
    tms = vertex_task_managers(j, v, 2000)
    assert tms["id"] == v.id and [t["taskmanager-id"] for t in tms["taskmanagers"]] == ["tm-1"]
    (tm,) = tms["taskmanagers"]
    assert tm["status-counts"]["RUNNING"] == 2 and set(tm["aggregated"]) == {"metrics", "status-duration"}
    assert vertex_accumulators(v) == {"id": v.id, "user-accumulators": []}
    assert [s["subtask"] for s in subtasks_accumulators(v)["subtasks"]] == [0, 1]


def test_task_manager_details_carry_memory_configuration_metrics_and_assigned_tasks() -> None:
    tm = TaskManagerSnapshot(
        id="tm-1", host="h", rpc_port=1, data_port=2, num_slots=2, free_slots=0, pid=9,
        allocated_jobs=("f" * 32, "e" * 32), last_heartbeat_ms=5, slot_tasks=(2, 1),
    )  # fmt: skip
    (info,) = task_managers_info([tm])["taskmanagers"]
    assert info["assignedTasks"] == 3
    details = task_manager_details(tm, status_metrics())
    assert details["allocatedSlots"][0] == {"jobId": "f" * 32, "assignedTasks": 2, "resource": {"cpuCores": 1.0}}
    assert set(details["memoryConfiguration"]) >= {"frameworkHeap", "taskHeap", "managedMemory", "networkMemory"}
    metrics = details["metrics"]
    assert metrics["heapUsed"] > 0 and metrics["heapMax"] >= metrics["heapUsed"]
    assert [g["name"] for g in metrics["garbageCollectors"]][:3] == ["Generation0", "Generation1", "Generation2"]


def test_the_hardware_a_task_manager_reports_is_shown_and_unknown_is_minus_one() -> None:
    hardware = HardwareDescription.of_this_process()
    assert 1 <= hardware.cpu_cores <= (os.cpu_count() or 1)
    assert 0 < hardware.free_memory <= hardware.physical_memory
    tm = TaskManagerSnapshot(
        id="tm-1", host="h", rpc_port=1, data_port=2, num_slots=1, free_slots=1, pid=9,
        allocated_jobs=(), last_heartbeat_ms=5,
    )  # fmt: skip
    details = task_manager_details(tm, {}, hardware.to_json())
    assert details["hardware"] == hardware.to_json() and details["hardware"]["managedMemory"] == -1
    (unknown,) = task_managers_info([tm], {})["taskmanagers"]  # the TaskManager could not be asked
    assert unknown["hardware"] == {"cpuCores": -1, "physicalMemory": -1, "freeMemory": -1, "managedMemory": -1}


def test_status_metrics_of_this_process() -> None:
    m = status_metrics()
    assert m["Status.JVM.Memory.Heap.Used"] > 0 and m["Status.JVM.Threads.Count"] >= 1
    assert m["Status.JVM.CPU.Time"] > 0 and 0.0 <= m["Status.JVM.CPU.Load"] <= 1.0
    assert "Status.JVM.GarbageCollector.Generation0.Count" in m
    assert "Status.JVM.GarbageCollector.Generation0.Time" in m


def test_thread_dump_and_flame_graph_from_python_stacks() -> None:
    import threading

    body = thread_dump_info(thread_dump())
    (main,) = [t for t in body["threadInfos"] if t["threadName"] == threading.current_thread().name]
    assert main["stringifiedThreadInfo"].startswith(f'"{main["threadName"]}" Id=')
    assert "test_thread_dump_and_flame_graph_from_python_stacks" in main["stringifiedThreadInfo"]
    ident = threading.get_ident()
    stacks = sample_stacks({"me": ident}, 2, 0.0)["me"]
    assert len(stacks) == 2 and "sample_stacks" in stacks[0][-1]
    graph = vertex_flame_graph([("a (f:1)", "b (f:2)"), ("a (f:1)", "wait (t:3)")], "FULL", 77)
    assert graph["endTimestamp"] == 77
    root = graph["data"]
    assert root["name"] == "root" and root["value"] == 2
    (a,) = root["children"]
    assert a["value"] == 2 and sorted(c["name"] for c in a["children"]) == ["b (f:2)", "wait (t:3)"]
    assert vertex_flame_graph([("a (f:1)", "wait (t:3)")], "ON_CPU", 1)["data"]["value"] == 0
    assert vertex_flame_graph([("a (f:1)", "wait (t:3)")], "OFF_CPU", 1)["data"]["value"] == 1


def test_the_end_of_input_watermark_is_not_listed() -> None:
    from strom.web.metric_messages import watermarks

    v = vertex(subtask(0, currentInputWatermark=float(2**63 - 1)), subtask(1, currentInputWatermark=5.0))
    assert watermarks(v) == [{"id": "1.currentInputWatermark", "value": "5"}]
