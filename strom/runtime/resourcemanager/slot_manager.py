"""``SlotManager``: the ResourceManager's pure book of TaskManagers and their free slots.

No I/O: events in (register, allocate, free, lose), answers out. Allocation spreads a request over the
TaskManagers with the most free slots first, so a job's subtasks land in as many processes as possible
(one GIL each) — except where a request names a preferred resource id for an offer (local recovery: the
TaskManager a restarted subtask ran on, or the one restarted in its place; Flink's
``PreviousAllocationSlotSelectionStrategy``), which gets it while that TaskManager has a free slot.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
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
    #: Flink's ``ResourceID``: what a TaskManager restarted in this one's place keeps (default: ``tm_id``)
    resource_id: str = ""
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
    resource_id: str = ""


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

    def allocate(
        self, job_id: str, count: int, preferred: Sequence[str] = (), *, more_task_managers: str = MINICLUSTER_HINT
    ) -> list[SlotOffer]:
        """``count`` offers for ``job_id``; offer ``i`` from the TaskManager of resource id ``preferred[i]`` when that
        one has a free slot left (first come, first served), the others spread as without preferences;
        ``more_task_managers``: how this cluster gets more slots, for the error when there are too few."""
        if count > self.num_free_slots():
            raise ResourceError(
                f"job {job_id} needs {count} slots; the cluster has {self.num_free_slots()} free in "
                f"{len(self.task_managers)} TaskManagers; hint: lower the parallelism or {more_task_managers}"
            )
        by_resource = {tm.resource_id or tm.tm_id: tm for tm in self.task_managers.values()}
        chosen: list[TaskManagerRegistration | None] = [None] * count
        for i, resource_id in enumerate(preferred[:count]):
            tm = by_resource.get(resource_id) if resource_id else None
            if tm is not None and len(tm.free_slots()) > sum(c is tm for c in chosen):
                chosen[i] = tm
        offers: list[SlotOffer] = []
        for i in range(count):
            tm = chosen[i] or max(
                self.task_managers.values(),
                key=lambda t: (len(t.free_slots()) - sum(c is t for c in chosen[i:]), -len(t.allocated)),
            )
            offers.append(self._take(tm, job_id))
        return offers

    @staticmethod
    def _take(tm: TaskManagerRegistration, job_id: str) -> SlotOffer:
        index = tm.free_slots()[0]
        allocation_id = uuid.uuid4().hex
        tm.allocated[index] = (job_id, allocation_id)
        return SlotOffer(
            tm_id=tm.tm_id,
            slot_index=index,
            allocation_id=allocation_id,
            data_address=tm.data_address,
            resource_id=tm.resource_id or tm.tm_id,
        )

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
