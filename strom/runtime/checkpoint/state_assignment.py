"""What a job restores from a checkpoint or savepoint (Flink's ``StateAssignmentOperation`` and the savepoint checks
of ``Checkpoints.loadAndValidateCheckpoint``): pure functions of the checkpoint's metadata and the job graph.

- :func:`check_savepoint_matches`: before anything is deployed, every operator state of the savepoint must find
  its operator (by uid, unless unclaimed state may be dropped), keyed state keeps its max parallelism, and the
  in-flight data of an unaligned checkpoint restores into the same topology — at another parallelism only over
  edges whose data can be redistributed (:mod:`~strom.runtime.checkpoint.channel_state_rescaling`);
- :func:`restore_descriptors`: the state one subtask restores — the key groups of its range, every old operator
  state (redistributed by the operator), its channels' in-flight buffers (at another parallelism: the old channels
  whose data it takes).
"""

from __future__ import annotations

from strom.exceptions import CheckpointError
from strom.graph.job_graph import JobGraph, JobVertex
from strom.runtime.checkpoint.channel_state_rescaling import is_rescaled, plan_rescaled_channels, rescalable
from strom.runtime.checkpoint.metadata import CheckpointMetadata
from strom.runtime.deployment import OperatorRestoreDescriptor, RescaledChannel
from strom.runtime.state.key_groups import compute_key_group_range_for_operator_index

__all__ = ["check_channel_state_matches", "check_savepoint_matches", "restore_descriptors"]


def check_savepoint_matches(metadata: CheckpointMetadata, job_graph: JobGraph, *, ignore_unclaimed: bool) -> None:
    """Every operator state of the savepoint must find its operator (by uid), unless ``ignore_unclaimed``."""
    known = {cfg.operator_id for v in job_graph.vertices.values() for cfg in v.chain}
    unmatched = sorted(set(metadata.operator_states) - known)
    if unmatched and not ignore_unclaimed:
        raise CheckpointError(
            f"expected every operator state of {metadata.external_pointer} to map to an operator of the job; "
            f"got state for {', '.join(unmatched)} that no operator claims; hint: give operators the same "
            "uid(...) as in the job that took the savepoint, or set execution.savepoint.ignore-unclaimed-state "
            "(allow_non_restored_state=True) to drop that state"
        )
    for v in job_graph.vertices.values():
        for cfg in v.chain:
            st = metadata.operator_states.get(cfg.operator_id)
            if st is not None and (st.keyed or st.incremental) and st.max_parallelism != v.max_parallelism:
                raise CheckpointError(
                    f"expected operator '{cfg.name}' to keep the max parallelism {st.max_parallelism} of its "
                    f"keyed state in {metadata.external_pointer}; got {v.max_parallelism}; hint: the max "
                    "parallelism fixes the key groups and cannot change across a restore: set it back with "
                    "env.set_max_parallelism(...)"
                )
    check_channel_state_matches(metadata, job_graph)


def check_channel_state_matches(metadata: CheckpointMetadata, job_graph: JobGraph) -> None:
    """In-flight buffers of an unaligned checkpoint belong to channels between subtasks: they restore into the same
    topology (every task's chain head saved them); at another parallelism (Flink 1.13+'s rescaling) only if every
    edge can redistribute them — not broadcast or custom partitioning."""
    if not any(st.channel for st in metadata.operator_states.values()):
        return
    for v in job_graph.vertices.values():
        head = v.chain[0]
        st = metadata.operator_states.get(head.operator_id)
        if st is None or not st.channel:
            raise CheckpointError(
                f"expected task '{v.name}' to run as when unaligned checkpoint {metadata.checkpoint_id} saved "
                f"its in-flight data (same chain head); got no saved in-flight data for its head operator "
                f"'{head.name}'; hint: to change the topology, restore from a savepoint (savepoints are always "
                "aligned) or take checkpoints without enable_unaligned_checkpoints()"
            )
    if not is_rescaled(metadata, job_graph):
        return
    for edge in job_graph.edges():
        if not rescalable(edge):
            target = job_graph.vertices[edge.target_vertex_id].name
            raise CheckpointError(
                f"expected the in-flight data of unaligned checkpoint {metadata.checkpoint_id} to be redistributable "
                f"to the new parallelism; got a {edge.ship_strategy} edge into task '{target}', whose in-flight "
                "records cannot be reassigned; hint: restore at the old parallelism, or from a savepoint "
                "(savepoints are always aligned)"
            )


def restore_descriptors(
    metadata: CheckpointMetadata,
    job_graph: JobGraph,
    vertex: JobVertex,
    subtask_index: int,
    *,
    reuse_shared: bool = False,
) -> dict[str, OperatorRestoreDescriptor]:
    """The state each operator of subtask ``subtask_index`` of ``vertex`` restores: its key groups (or the incremental
    RocksDB checkpoints of the old subtasks that held them), every old operator state, its in-flight buffers — at
    another parallelism, the head operator gets the old channels whose in-flight data the subtask takes instead, and
    no output state is re-sent. ``reuse_shared``: the restored backends may reference the checkpoint's shared files
    (see :meth:`~strom.runtime.checkpoint.storage.CheckpointStorage.register_restored`)."""
    out: dict[str, OperatorRestoreDescriptor] = {}
    kg_range = compute_key_group_range_for_operator_index(vertex.max_parallelism, vertex.parallelism, subtask_index)
    rescaled = is_rescaled(metadata, job_graph)
    head_id = vertex.chain[0].operator_id
    for cfg in vertex.chain:
        st = metadata.operator_states.get(cfg.operator_id)
        if st is None:
            continue
        pieces: tuple[RescaledChannel, ...] = ()
        if rescaled and cfg.operator_id == head_id and st.channel:
            pieces = plan_rescaled_channels(metadata, job_graph, vertex, subtask_index)
        out[cfg.operator_id] = OperatorRestoreDescriptor(
            checkpoint_id=metadata.checkpoint_id,
            keyed=tuple((kg, h) for kg, h in sorted(st.keyed.items()) if kg in kg_range),
            operator=tuple(st.operator.get(j) for j in range(st.parallelism)),
            old_parallelism=st.parallelism,
            channel=None if rescaled else st.channel.get(subtask_index),
            rescaled_channels=pieces,
            incremental=tuple(
                inc for _, inc in sorted(st.incremental.items()) if inc.overlaps(kg_range.start, kg_range.end)
            ),
            reuse_shared=reuse_shared,
        )
    return out
