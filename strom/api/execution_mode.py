"""``RuntimeExecutionMode`` (Flink's ``execution.runtime-mode``): ``STREAMING``, ``BATCH`` or ``AUTOMATIC``.

``STREAMING`` runs a job as a streaming job. ``BATCH`` runs a bounded job as Flink runs batch jobs (see
docs/design.md); ``AUTOMATIC`` picks ``BATCH`` when every source is bounded, else ``STREAMING`` (as Flink):

- every source must be bounded (checked before the job starts);
- every exchange that is not chained is blocking: producers write their output to local sort-merge files and
  consumers read them once the producers finished, so the job runs stage after stage (pipelined regions scheduled
  when their inputs are finished) on as few slots as one task needs, and a failed task re-runs alone;
- watermark strategies assign timestamps but emit no watermark before the end of input, so event-time windows
  and timers fire at the end of input, with nothing late;
- a keyed ``reduce``/``sum``/``min``/``max``/``min_by``/``max_by`` emits one final value per key at the end of
  input instead of every intermediate one, keys in Flink's batch order (sorted by their serialized form);
- checkpointing does not apply (Flink's batch jobs recover by re-running tasks, not from checkpoints).
"""

from __future__ import annotations

import enum

__all__ = ["RuntimeExecutionMode"]


class RuntimeExecutionMode(enum.Enum):
    STREAMING = "STREAMING"
    BATCH = "BATCH"
    AUTOMATIC = "AUTOMATIC"

    @staticmethod
    def of(value: object) -> RuntimeExecutionMode:
        """A mode from itself or its name (any case), as ``execution.runtime-mode`` is given."""
        if isinstance(value, RuntimeExecutionMode):
            return value
        if isinstance(value, str) and value.strip().upper() in RuntimeExecutionMode.__members__:
            return RuntimeExecutionMode[value.strip().upper()]
        raise ValueError(
            f"expected a runtime mode STREAMING, BATCH or AUTOMATIC; got {value!r}; "
            "hint: env.set_runtime_mode(RuntimeExecutionMode.BATCH) or execution.runtime-mode: BATCH"
        )
