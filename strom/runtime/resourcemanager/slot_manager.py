"""``SlotManager``: the ResourceManager's pure book of TaskManagers and their free slots.

No I/O: events in (register, allocate, free, lose), answers out. Allocation spreads a request over the
TaskManagers with the most free slots first, so a job's subtasks land in as many processes as possible
(one GIL each).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from strom.exceptions import ResourceError

__all__ = ["SlotManager", "SlotOffer", "TaskManagerRegistration"]


@dataclass(slots=True, kw_only=True)
class TaskManagerRegistration:
    tm_id: str
    rpc_address: tuple[str, int]
    data_address: tuple[str, int]
    num_slots: int
    pid: int
    #: slot index -> (job id, allocation id) of allocated slots
    allocated: dict[int, tuple[str, str]] = field(default_factory=dict)

    def free_slots(self) -> list[int]:
        return [i for i in range(self.num_slots) if i not in self.allocated]


@dataclass(frozen=True, slots=True, kw_only=True)
class SlotOffer:
    tm_id: str
    slot_index: int
    allocation_id: str
    data_address: tuple[str, int]


#: how the embedded MiniCluster gets more slots
MINICLUSTER_HINT = "start more TaskManagers (minicluster.number-of-taskmanagers, taskmanager.numberOfTaskSlots)"
#: how a standalone cluster gets more slots
STANDALONE_HINT = (
    "add TaskManagers to the cluster (strom cluster add-taskmanager, or strom taskmanager on another host)"
)


class SlotManager:
    def __init__(self) -> None:
        self.task_managers: dict[str, TaskManagerRegistration] = {}

    def register_task_manager(self, reg: TaskManagerRegistration) -> None:
        self.task_managers[reg.tm_id] = reg

    def unregister_task_manager(self, tm_id: str) -> TaskManagerRegistration | None:
        return self.task_managers.pop(tm_id, None)

    def num_free_slots(self) -> int:
        return sum(len(tm.free_slots()) for tm in self.task_managers.values())

    def allocate(self, job_id: str, count: int, *, more_task_managers: str = MINICLUSTER_HINT) -> list[SlotOffer]:
        """``count`` free slots for ``job_id``, spread over the TaskManagers; ``more_task_managers``: how this
        cluster gets more of them, for the error when there are too few."""
        if count > self.num_free_slots():
            raise ResourceError(
                f"job {job_id} needs {count} slots; the cluster has {self.num_free_slots()} free in "
                f"{len(self.task_managers)} TaskManagers; hint: lower the parallelism or {more_task_managers}"
            )
        offers: list[SlotOffer] = []
        while len(offers) < count:
            tm = max(self.task_managers.values(), key=lambda t: (len(t.free_slots()), -len(t.allocated)))
            index = tm.free_slots()[0]
            allocation_id = uuid.uuid4().hex
            tm.allocated[index] = (job_id, allocation_id)
            offers.append(
                SlotOffer(
                    tm_id=tm.tm_id,
                    slot_index=index,
                    allocation_id=allocation_id,
                    data_address=tm.data_address,
                )
            )
        return offers

    def free_job(self, job_id: str) -> list[str]:
        """Free every slot of ``job_id``; returns the TaskManagers that held some."""
        touched = []
        for tm in self.task_managers.values():
            mine = [i for i, (j, _) in tm.allocated.items() if j == job_id]
            for i in mine:
                del tm.allocated[i]
            if mine:
                touched.append(tm.tm_id)
        return touched

    def validate(self) -> None:
        for tm in self.task_managers.values():
            assert all(0 <= i < tm.num_slots for i in tm.allocated), tm
            ids = [a for _, a in tm.allocated.values()]
            assert len(ids) == len(set(ids)), tm
