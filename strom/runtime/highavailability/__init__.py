"""JobManager high availability with a shared file system (``high-availability.type: file``).

Flink's HA services (seed 004 §1.2: the JobManager initialises them before it accepts jobs) on an fsspec
directory instead of ZooKeeper or Kubernetes ConfigMaps::

    <high-availability.storageDir>/<high-availability.cluster-id>/
        leader/lease-<generation>.json     the leader lease (LeaderElectionService): one file per write, created
                                           exclusively, the highest generation is the current lease
        jobgraphs/<job id>.jobgraph        the submitted jobs not ended yet (JobGraphStore / ExecutionPlanStore)
        checkpoints/<job id>/checkpoint-<n>.json   pointers to completed checkpoints (CompletedCheckpointStore)
        checkpoints/<job id>/recovery-<g>.json     which checkpoint the leader of lease generation g recovered from
        job-results/<job id>_DIRTY.json    an ended job whose clean-up is not done (JobResultStore, FLIP-194)

:mod:`lease` is the pure leader-election state machine; :mod:`lease_store` writes and reads the lease files;
:mod:`stores` holds the job graphs and checkpoint pointers; :mod:`services` drives the election on an asyncio loop
and hands the fencing token (the leader's session id) to whoever writes or commits.
"""

from __future__ import annotations
