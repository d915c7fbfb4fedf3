"""``ResultPartitionType`` (Flink's): how an intermediate result is exchanged.

* ``PIPELINED``: consumers read while the producer writes; both run at once and fail together (one pipelined region).
* ``BLOCKING``: the producer writes the whole result to local files first (the sort-merge shuffle,
  :mod:`strom.runtime.network.sort_merge_result_partition`); consumers read it once the producer finished, as often as
  they need — it splits pipelined regions, so a BATCH job runs stage after stage and a failed task re-runs alone.
"""

from __future__ import annotations

import enum

__all__ = ["ResultPartitionType"]


class ResultPartitionType(enum.Enum):
    PIPELINED = "PIPELINED"
    BLOCKING = "BLOCKING"

    @property
    def is_blocking(self) -> bool:
        return self is ResultPartitionType.BLOCKING
