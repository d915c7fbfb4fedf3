"""``RecordWriter``: routes an operator's output batches into the subpartitions of its result partition.

Records collect per channel until ``batch_size`` of them are ready, then go to the subpartition as one
buffer; :meth:`flush` hands over partial buffers (on the buffer timeout, at end of input, or after every
emit when the buffer timeout is 0).
"""

from __future__ import annotations

from typing import Any

from strom.exceptions import UserFunctionError
from strom.runtime.network.partitioner import StreamPartitioner
from strom.runtime.network.result_partition import ResultPartition

__all__ = ["RecordWriter"]


class RecordWriter:
    def __init__(
        self,
        partition: ResultPartition,
        partitioner: StreamPartitioner,
        *,
        batch_size: int,
        flush_always: bool,
        subtask_index: int,
        owner: Any,
    ) -> None:
        self.partition = partition
        self.partitioner = partitioner
        self.batch_size = batch_size
        self.flush_always = flush_always
        self.owner = owner  # the operator whose output this is; names it in routing errors
        n = len(partition.subpartitions)
        partitioner.setup(n, subtask_index)
        self._n = n
        self._outs: list[list[Any]] = [[] for _ in range(n)]
        self.num_records_out = 0
        self.back_pressured_seconds = 0.0

    def emit(self, batch: list[Any]) -> None:
        outs = self._outs
        try:
            self.partitioner.route(batch, outs)
        except UserFunctionError:
            raise
        except Exception as exc:
            role = (
                f"the key selector / partitioner ({self.partitioner.ship_strategy}) of the output "
                f"of operator '{self.owner.name}'"
            )
            raise self.owner.user_error(exc, None, role=role) from exc
        self.num_records_out += len(batch)
        size = self.batch_size
        emit = self.partition.emit
        for c in range(self._n):
            lst = outs[c]
            if len(lst) >= size:
                outs[c] = []
                self.back_pressured_seconds += emit(c, lst)
        if self.flush_always:
            self.flush()

    def flush(self) -> None:
        outs = self._outs
        emit = self.partition.emit
        for c in range(self._n):
            if outs[c]:
                lst = outs[c]
                outs[c] = []
                self.back_pressured_seconds += emit(c, lst)

    def finish(self) -> None:
        self.flush()
        self.partition.finish()
