"""``LocalExecutor``: ``execution.target: local`` (the default) — the job on an embedded MiniCluster.

Flink's ``LocalExecutor``: a :class:`~strom.deploy.minicluster.MiniCluster` started for the job, with
``minicluster.number-of-taskmanagers`` TaskManagers, else as many as the job's slots need at
``taskmanager.numberOfTaskSlots`` each; the job's :class:`~strom.client.job_client.JobClient` closes it once the job
ended. Their processes start before the MiniCluster is even imported
(:class:`~strom.deploy.prestarted_task_managers.PrestartedTaskManagers`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from strom.client.job_cluster_executor import AbstractJobClusterExecutor
from strom.client.pipeline_executor import PipelineExecutor, PipelineExecutorFactory
from strom.config import ClusterOptions, Configuration, TaskManagerOptions
from strom.deploy.prestarted_task_managers import PROCESS, PrestartedTaskManagers, task_manager_mode

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from strom.deploy.active_cluster import ActiveCluster
    from strom.graph.job_graph import JobGraph

__all__ = ["LocalExecutor", "LocalExecutorFactory"]


class LocalExecutor(AbstractJobClusterExecutor):
    """A MiniCluster per job (Flink's ``LocalExecutor``)."""

    NAME = "local"

    def _create_cluster(
        self, job_graph: JobGraph, slots: int, configuration: Configuration, spark: SparkSession | None
    ) -> ActiveCluster:
        c = configuration
        tms = c.get(ClusterOptions.NUM_TASK_MANAGERS) or math.ceil(slots / c.get(TaskManagerOptions.NUM_TASK_SLOTS))
        # the TaskManager processes first: their interpreters and imports overlap with the JobManager's
        prestarted = PrestartedTaskManagers(max(1, tms)) if task_manager_mode(c) == PROCESS else None
        try:
            from strom.deploy.minicluster import MiniCluster

            cluster = MiniCluster(c, num_task_managers=tms, prestarted=prestarted)
        except BaseException:
            if prestarted is not None:
                prestarted.close()
            raise
        return cluster.start()  # closes the cluster, and what it did not take of them, if it fails


class LocalExecutorFactory(PipelineExecutorFactory):
    name = LocalExecutor.NAME

    def get_executor(self, configuration: Configuration) -> PipelineExecutor:
        return LocalExecutor()
