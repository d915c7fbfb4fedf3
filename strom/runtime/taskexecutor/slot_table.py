"""``TaskSlotTable``: the slots of one TaskManager, who holds them, and the tasks in each.

A slot is allocated to a job (by an allocation id) when the ResourceManager asks; tasks of that job
may then be added to it — several, when the job's slot-sharing group puts them together.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from strom.exceptions import ResourceError

__all__ = ["TaskSlot", "TaskSlotTable"]


@dataclass(slots=True)
class TaskSlot:
    index: int
    allocation_id: str | None = None
    job_id: str | None = None
    tasks: set[str] = field(default_factory=set)  # execution attempt ids

    @property
    def free(self) -> bool:
        return self.allocation_id is None


class TaskSlotTable:
    def __init__(self, num_slots: int) -> None:
        self.slots = [TaskSlot(i) for i in range(num_slots)]

    def allocate_slot(self, index: int, job_id: str, allocation_id: str) -> None:
        if not 0 <= index < len(self.slots):
            raise ResourceError(f"expected a slot index below {len(self.slots)}; got {index}")
        slot = self.slots[index]
        if slot.allocation_id == allocation_id:
            return
        if not slot.free:
            raise ResourceError(
                f"slot {index} is already allocated to job {slot.job_id} ({slot.allocation_id}); "
                f"got a request for {allocation_id}"
            )
        slot.allocation_id = allocation_id
        slot.job_id = job_id

    def _by_allocation(self, allocation_id: str) -> TaskSlot:
        for slot in self.slots:
            if slot.allocation_id == allocation_id:
                return slot
        raise ResourceError(f"expected an allocated slot {allocation_id}; this TaskManager has none by that id")

    def add_task(self, allocation_id: str, job_id: str, attempt_id: str) -> None:
        slot = self._by_allocation(allocation_id)
        if slot.job_id != job_id:
            raise ResourceError(f"slot {allocation_id} belongs to job {slot.job_id}; got a task of job {job_id}")
        slot.tasks.add(attempt_id)

    def remove_task(self, attempt_id: str) -> None:
        for slot in self.slots:
            slot.tasks.discard(attempt_id)

    def free_slot(self, allocation_id: str) -> None:
        for slot in self.slots:
            if slot.allocation_id == allocation_id:
                slot.allocation_id = None
                slot.job_id = None
                slot.tasks.clear()

    def free_slots_of_job(self, job_id: str) -> None:
        for slot in self.slots:
            if slot.job_id == job_id:
                slot.allocation_id = None
                slot.job_id = None
                slot.tasks.clear()

    def num_free(self) -> int:
        return sum(1 for s in self.slots if s.free)
