"""The pure pieces of the REST API: Flink's JSON bodies from snapshots, the metric helpers, async results, tokens."""

from __future__ import annotations

import asyncio

import pytest

from strom.runtime.checkpoint.checkpoint_stats_tracker import CheckpointStatsTracker, RestoredCheckpoint
from strom.runtime.checkpoint.coordinator import CheckpointStats
from strom.web.accessor import (
    CheckpointSettings,
    CheckpointSnapshot,
    EdgeSnapshot,
    ExceptionSnapshot,
    JobSnapshot,
    RestHandlerError,
    SubtaskSnapshot,
    VertexSnapshot,
    vertex_hex_id,
)
from strom.web.auth import bearer_token_matches, rest_token
from strom.web.checkpoint_messages import checkpoint_config, checkpointing_statistics, stats_summary
from strom.web.job_messages import job_details, job_exceptions, jobs_overview, vertex_state
from strom.web.metric_messages import (
    aggregated_metrics,
    back_pressure_info,
    metric_collection,
    parse_subtask_ranges,
    watermarks,
)
from strom.web.operations import AsynchronousOperations, operation_result

pytestmark = pytest.mark.timeout(30)


def subtask(i: int, state: str = "RUNNING", **metrics: float) -> SubtaskSnapshot:
    return SubtaskSnapshot(subtask=i, attempt=0, state=state, task_manager_id="tm-1", endpoint="h:1", metrics=metrics)


def vertex(*subtasks: SubtaskSnapshot, vid: str = "a" * 32, inputs: tuple[EdgeSnapshot, ...] = ()) -> VertexSnapshot:
    return VertexSnapshot(
        id=vid,
        name="v",
        parallelism=len(subtasks),
        max_parallelism=128,
        slot_sharing_group="default",
        inputs=inputs,
        subtasks=subtasks,
    )


SETTINGS = CheckpointSettings(
    interval_ms=1000,
    timeout_ms=600_000,
    min_pause_ms=0,
    max_concurrent=1,
    tolerable_failures=0,
    exactly_once=True,
    unaligned=False,
    retention="NO_EXTERNALIZED_CHECKPOINTS",
    num_retained=1,
    storage="file:///cp",
    state_backend="hashmap",
)


def job(*vertices: VertexSnapshot, **kw: object) -> JobSnapshot:
    fields: dict[str, object] = dict(
        job_id="f" * 32,
        name="j",
        state="RUNNING",
        start_time_ms=1000,
        end_time_ms=-1,
        vertices=vertices,
        exceptions=(),
        checkpointing=SETTINGS,
        checkpoints=(),
        batch=False,
    )
    fields.update(kw)
    return JobSnapshot(**fields)  # type: ignore[arg-type]


def test_vertex_ids_are_flinks_32_hex_and_stable() -> None:
    vid = vertex_hex_id("sums")
    assert len(vid) == 32 and int(vid, 16) >= 0 and vid == vertex_hex_id("sums") != vertex_hex_id("op-3")


@pytest.mark.parametrize(
    ("states", "expected"),
    [
        (["RUNNING", "RUNNING"], "RUNNING"),
        (["FINISHED", "RUNNING"], "RUNNING"),
        (["FINISHED", "FINISHED"], "FINISHED"),
        (["RUNNING", "FAILED"], "FAILED"),
        (["CANCELING", "CANCELED"], "CANCELING"),
        (["CREATED", "DEPLOYING"], "DEPLOYING"),
        (["CREATED", "CREATED"], "CREATED"),
    ],
)
def test_vertex_state_aggregates_as_flink(states: list[str], expected: str) -> None:
    assert vertex_state([subtask(i, s) for i, s in enumerate(states)]) == expected


def test_job_details_counts_and_io_metrics() -> None:
    v = vertex(subtask(0, numRecordsIn=10, numRecordsOut=4), subtask(1, "DEPLOYING"))
    body = job_details(job(v))
    (entry,) = body["vertices"]
    assert entry["status"] == "RUNNING" and entry["tasks"]["RUNNING"] == 1 and entry["tasks"]["DEPLOYING"] == 1
    assert entry["metrics"]["read-records"] == 10 and entry["metrics"]["write-records"] == 4
    assert entry["metrics"]["read-records-complete"] is True
    assert body["status-counts"]["RUNNING"] == 1 and body["end-time"] == -1 and body["duration"] >= 0
    (overview,) = jobs_overview([job(v)])["jobs"]
    assert overview["tasks"]["total"] == 2 and overview["tasks"]["running"] == 1


def test_io_metrics_are_incomplete_until_every_running_subtask_reported() -> None:
    body = job_details(job(vertex(subtask(0, numRecordsIn=1), subtask(1))))
    assert body["vertices"][0]["metrics"]["read-records-complete"] is False


def test_exceptions_newest_first_and_truncated() -> None:
    old = ExceptionSnapshot(
        timestamp_ms=1, exception_name="A", stacktrace="a", task_name="", task_manager_id="", endpoint=""
    )
    new = ExceptionSnapshot(
        timestamp_ms=2, exception_name="B", stacktrace="b", task_name="t (1/1)", task_manager_id="tm-1", endpoint="h:1"
    )
    body = job_exceptions(job(exceptions=(old, new)))
    first, second = body["exceptionHistory"]["entries"]
    assert first["exceptionName"] == "B" and first["taskName"] == "t (1/1)" and first["endpoint"] == "h:1"
    assert "taskName" not in second  # Flink leaves out what it does not know (NON_NULL)
    assert job_exceptions(job(exceptions=(old, new)), 1)["exceptionHistory"]["truncated"] is True


def test_stats_summary_quantiles() -> None:
    s = stats_summary([float(x) for x in range(1, 101)])
    assert (s["min"], s["max"], s["avg"], s["p50"], s["p90"], s["p999"]) == (1, 100, 50, 50.0, 90.0, 100.0)
    assert stats_summary([])["max"] == 0


def test_checkpointing_statistics_latest_history_and_discarded() -> None:
    v = vertex(subtask(0))

    def cp(cid: int, status: str, savepoint: bool = False) -> CheckpointSnapshot:
        return CheckpointSnapshot(
            id=cid,
            status=status,
            is_savepoint=savepoint,
            unaligned=False,
            trigger_timestamp_ms=100 * cid,
            duration_ms=5 if status == "COMPLETED" else None,
            state_size=10 * cid,
            failure_reason="expired" if status == "FAILED" else "",
            external_path=f"/cp/chk-{cid}" if status == "COMPLETED" else "",
            subtasks=((v.id, 0, {"state_size": 10.0 * cid}),),
        )

    checkpoints = (
        cp(1, "COMPLETED"),
        cp(2, "FAILED"),
        cp(3, "COMPLETED"),
        cp(4, "COMPLETED", True),
        cp(5, "IN_PROGRESS"),
    )
    tracker = CheckpointStatsTracker()  # fed as the coordinator feeds it: triggered, then completed or failed
    for c in checkpoints:
        for status in dict.fromkeys(("IN_PROGRESS", c.status)):
            tracker.report(
                CheckpointStats(
                    checkpoint_id=c.id,
                    status=status,
                    is_savepoint=c.is_savepoint,
                    trigger_timestamp_ms=c.trigger_timestamp_ms,
                    duration_ms=c.duration_ms if status == "COMPLETED" else None,
                    state_size=c.state_size if status == "COMPLETED" else 0,
                    failure_reason=c.failure_reason,
                )
            )
    tracker.report_restored(RestoredCheckpoint(7, 1234, True, "/sp/savepoint-7"))
    body = checkpointing_statistics(job(v, checkpoints=checkpoints, checkpoint_stats=tracker.snapshot()))
    assert body["counts"] == {"restored": 1, "total": 5, "in_progress": 1, "completed": 3, "failed": 1}
    assert body["latest"]["restored"] == {
        "id": 7,
        "restore_timestamp": 1234,
        "is_savepoint": True,
        "external_path": "/sp/savepoint-7",
    }
    assert [h["id"] for h in body["history"]] == [5, 4, 3, 2, 1]
    assert body["latest"]["completed"]["id"] == 3 and body["latest"]["completed"]["discarded"] is False
    assert body["history"][-1]["discarded"] is True  # only the newest (num-retained 1) is kept
    assert body["latest"]["savepoint"]["checkpoint_type"] == "SAVEPOINT"
    assert body["latest"]["failed"]["failure_message"] == "expired"
    assert body["history"][0]["className"] == "in_progress" and body["history"][0]["num_acknowledged_subtasks"] == 1
    assert body["summary"]["state_size"]["max"] == 40


def test_checkpoint_config() -> None:
    body = checkpoint_config(SETTINGS)
    assert body["mode"] == "exactly_once" and body["externalization"] == {
        "enabled": False,
        "delete_on_cancellation": True,
    }


def test_metric_collection_lists_ids_or_values_as_strings() -> None:
    available = {"0.numRecordsIn": 12.0, "0.inPoolUsage": 0.25}
    assert metric_collection(available, None) == [{"id": "0.inPoolUsage"}, {"id": "0.numRecordsIn"}]
    assert metric_collection(available, ["0.numRecordsIn", "0.nope", "0.inPoolUsage"]) == [
        {"id": "0.numRecordsIn", "value": "12"},
        {"id": "0.inPoolUsage", "value": "0.25"},
    ]


def test_aggregated_metrics_and_skew() -> None:
    subtasks = [subtask(0, numRecordsIn=0), subtask(1, numRecordsIn=10)]
    (m,) = aggregated_metrics(subtasks, ["numRecordsIn"], None)
    assert (m["min"], m["max"], m["avg"], m["sum"], m["skew"]) == (0, 10, 5, 10, 100.0)
    assert aggregated_metrics(subtasks, ["numRecordsIn"], ["max"]) == [{"id": "numRecordsIn", "max": 10}]
    with pytest.raises(RestHandlerError):
        aggregated_metrics(subtasks, ["numRecordsIn"], ["median"])


def test_subtask_ranges() -> None:
    assert parse_subtask_ranges("1,3-4,9", 5) == [1, 3, 4]
    assert parse_subtask_ranges(None, 3) == [0, 1, 2]
    with pytest.raises(RestHandlerError) as err:
        parse_subtask_ranges("x", 3)
    assert err.value.status == 400


def test_back_pressure_levels() -> None:
    assert back_pressure_info(vertex(subtask(0))) == {"status": "deprecated"}
    body = back_pressure_info(
        vertex(subtask(0, backPressuredTimeMsPerSecond=50.0), subtask(1, backPressuredTimeMsPerSecond=600.0))
    )
    assert [s["backpressureLevel"] for s in body["subtasks"]] == ["ok", "high"] and body["backpressureLevel"] == "high"
    low = back_pressure_info(vertex(subtask(0, backPressuredTimeMsPerSecond=300.0)))
    assert low["backpressureLevel"] == "low" and low["subtasks"][0]["ratio"] == 0.3


def test_watermarks_of_subtasks_that_report_them() -> None:
    v = vertex(subtask(0, currentInputWatermark=1700.0), subtask(1))
    assert watermarks(v) == [{"id": "0.currentInputWatermark", "value": "1700"}]


def test_tokens() -> None:
    token = rest_token(b"s" * 32)
    assert len(token) == 64 and token == rest_token(b"s" * 32) != rest_token(b"t" * 32)
    assert bearer_token_matches(f"Bearer {token}", token)
    assert bearer_token_matches(f"bearer  {token} ", token)
    for header in (None, "", token, f"Basic {token}", f"Bearer {token[:-1]}", "Bearer "):
        assert not bearer_token_matches(header, token)


def test_asynchronous_operations() -> None:
    async def scenario() -> None:
        ops = AsynchronousOperations()
        gate = asyncio.Event()

        async def savepoint() -> str:
            await gate.wait()
            return "/sp/savepoint-1"

        async def failing() -> str:
            raise ValueError("no")

        tid = ops.trigger("j", None, savepoint())
        assert ops.result("j", tid) == {"status": {"id": "IN_PROGRESS"}}
        assert ops.trigger("j", tid, savepoint()) == tid  # the same trigger id names the same operation
        gate.set()
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert ops.result("j", tid) == {"status": {"id": "COMPLETED"}, "operation": {"location": "/sp/savepoint-1"}}
        bad = ops.trigger("j", "b" * 32, failing())
        await asyncio.sleep(0)
        cause = ops.result("j", bad)["operation"]["failure-cause"]
        assert cause["class"] == "builtins.ValueError" and "no" in cause["stack-trace"]
        with pytest.raises(RestHandlerError) as err:
            ops.result("other-job", tid)
        assert err.value.status == 404
        await ops.close()

    asyncio.run(scenario())


def test_operation_result_of_a_cancelled_task() -> None:
    async def scenario() -> None:
        task = asyncio.get_running_loop().create_task(asyncio.sleep(10, result="x"))
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        assert operation_result(task)["operation"]["failure-cause"]["class"] == "asyncio.CancelledError"

    asyncio.run(scenario())
