"""Checkpointing for a new JobMaster (Flink's ``ExecutionGraph.enableCheckpointing`` and the scheduler's creation of
its ``CheckpointCoordinator``): what the job restores from, its checkpoint storage and its :class:`CheckpointDriver`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from strom.config import CheckpointingOptions, StateBackendOptions
from strom.exceptions import CheckpointError
from strom.runtime.checkpoint.checkpoint_driver import CheckpointDriver
from strom.runtime.checkpoint.coordinator import CheckpointCoordinatorConfiguration
from strom.runtime.checkpoint.plan_calculator import DefaultCheckpointPlanCalculator
from strom.runtime.checkpoint.state_assignment import check_savepoint_matches
from strom.runtime.checkpoint.storage import CheckpointStorage, check_verifiable, resolve_checkpoint_pointer
from strom.runtime.deployment import CheckpointingSettings
from strom.runtime.jobmaster.subtask_gateway import TaskCheckpointGateway

if TYPE_CHECKING:
    from strom.runtime.jobmaster.jobmaster import JobMaster

__all__ = ["enable_checkpointing"]


def _client_temporary_dir(default_dir: Callable[[], str] | None) -> str:
    """The client's temporary directory, whose owner lock tells whether the client lives — for a job that does
    not checkpoint, whose uncommitted output nothing restores once the client is gone. ``""`` where the cluster
    has none (Spark off local mode: no directory of the driver reaches the executors)."""
    if default_dir is None:
        return ""
    try:
        return default_dir()
    except CheckpointError:
        return ""


def enable_checkpointing(jm: JobMaster, default_dir: Callable[[], str] | None) -> None:
    """Flink's ``ExecutionGraph.enableCheckpointing``: the restore point (``execution.savepoint.path``, checked
    against the job), the checkpoint storage and the :class:`CheckpointDriver` of the job's configuration, and the
    scheduler's checkpointing settings; without checkpointing, the client's temporary directory instead."""
    c = jm.configuration
    savepoint = c.get(CheckpointingOptions.SAVEPOINT_PATH)
    if savepoint:
        _, jm.restore_from = resolve_checkpoint_pointer(savepoint)
        check_verifiable(jm.restore_from, c.get(CheckpointingOptions.SAVEPOINT_RESTORE_UNVERIFIED))
        check_savepoint_matches(
            jm.restore_from,
            jm.job_graph,
            ignore_unclaimed=jm.configuration.get(CheckpointingOptions.SAVEPOINT_IGNORE_UNCLAIMED_STATE),
        )
    config = CheckpointCoordinatorConfiguration.from_configuration(c)
    if config is None:
        jm.scheduler.checkpointing = None
        jm.scheduler.temporary_dir = _client_temporary_dir(default_dir)
        return
    configured = c.get(CheckpointingOptions.CHECKPOINTS_DIRECTORY)
    base = configured or (default_dir() if default_dir else "")
    if not base:
        raise CheckpointError(
            "expected a checkpoint directory; got none; hint: set execution.checkpointing.dir "
            "(env.get_checkpoint_config().set_checkpoint_storage(path))"
        )
    storage = CheckpointStorage(base, jm.job_id, num_retained=c.get(CheckpointingOptions.MAX_RETAINED_CHECKPOINTS))
    if jm.restore_from is not None:  # CLAIM: one of the job's retained checkpoints; NO_CLAIM: never deleted
        storage.register_restored(jm.restore_from, c.get(CheckpointingOptions.RESTORE_MODE))
    first_id = jm.restore_from.checkpoint_id + 1 if jm.restore_from is not None else 1
    jm.checkpoints = CheckpointDriver(
        jm.job_id,
        config,
        storage,
        plan_calculator=DefaultCheckpointPlanCalculator(jm.graph, not_leader=jm.not_leader),
        coordinators=jm.coordinators,
        tasks=TaskCheckpointGateway(jm.gateways, jm.call_task_nowait),
        listener=jm,
        restored=jm.restore_from is not None,
        first_checkpoint_id=first_id,
        restored_from=jm.restore_from,
    )
    jm.scheduler.checkpointing = CheckpointingSettings(
        exactly_once=config.exactly_once, local_recovery=c.get(StateBackendOptions.LOCAL_RECOVERY)
    )
    jm.scheduler.temporary_dir = "" if configured else base
