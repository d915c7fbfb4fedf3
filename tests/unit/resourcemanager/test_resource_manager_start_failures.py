"""The ResourceManager's side of TaskManagers that end before registering: whoever starts TaskManagers hears when a
slot request waits (``slot_request_listeners``) and may fail the requests waiting now (``fail_slot_requests``);
the cluster refuses start-failure options that make no sense. No TaskManager, no network."""

from __future__ import annotations

import asyncio

import pytest

from strom.config import ClusterOptions, Configuration
from strom.deploy.minicluster import MiniCluster
from strom.exceptions import ConfigurationError, ResourceError, TaskManagerStartError
from strom.runtime.resourcemanager.resource_manager import ResourceManager
from strom.runtime.resourcemanager.slot_manager import TaskManagerRegistration


def resource_manager() -> ResourceManager:
    return ResourceManager(secret=b"s" * 32, heartbeat_interval=1.0, heartbeat_timeout=10.0)


def test_waiting_slot_requests_are_announced_and_fail_with_the_start_error() -> None:
    async def scenario() -> None:
        rm = resource_manager()
        wanted: list[bool] = []
        rm.slot_request_listeners.append(lambda: wanted.append(rm.slots_wanted))
        request = asyncio.create_task(rm.request_slots("job", 1, timeout=30.0))
        registration = asyncio.create_task(rm.wait_for_task_managers(1, timeout=30.0))
        await asyncio.sleep(0.01)
        assert wanted == [True, True] and rm.slots_wanted
        rm.fail_slot_requests(TaskManagerStartError("expected TaskManagers to register; got 10 that ended"))
        for waiting in (request, registration):
            with pytest.raises(TaskManagerStartError, match="got 10 that ended"):
                await asyncio.wait_for(waiting, 5)
        assert not rm.slots_wanted
        # a request after the failure waits again (the cluster tries to start TaskManagers for it) and times out
        with pytest.raises(ResourceError, match="needs 1 slots") as timed_out:
            await rm.request_slots("job", 1, timeout=0.05)
        assert not isinstance(timed_out.value, TaskManagerStartError)
        assert wanted == [True, True, True]

    asyncio.run(scenario())


def test_a_request_that_has_its_slots_is_neither_announced_nor_failed() -> None:
    async def scenario() -> None:
        rm = resource_manager()
        rm.slot_manager.register_task_manager(
            TaskManagerRegistration(tm_id="tm-1", rpc_address=("h", 1), data_address=("h", 2), num_slots=1, pid=1)
        )
        rm.slot_request_listeners.append(lambda: pytest.fail("nothing waits"))
        rm.fail_slot_requests(TaskManagerStartError("irrelevant"))
        await rm.wait_for_task_managers(1, timeout=1.0)

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"resourcemanager.start-worker.max-failure-rate": 0}, r"max-failure-rate > 0 .*got 0\.0"),
        ({"resourcemanager.start-worker.max-failure-rate": "inf"}, r"max-failure-rate > 0 .*got inf"),
        ({"resourcemanager.start-worker.retry-interval": -1}, r"retry-interval >= 0; got -1 ms"),
    ],
)
def test_start_failure_options_that_make_no_sense_are_refused(options: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        MiniCluster(Configuration(options), num_task_managers=1)


def test_flink_s_defaults() -> None:
    conf = Configuration()
    assert conf.get(ClusterOptions.START_WORKER_MAX_FAILURE_RATE) == 10.0
    assert conf.get(ClusterOptions.START_WORKER_RETRY_INTERVAL).total_seconds() == 3.0
