"""``SparkExecutor``: ``execution.target: spark`` — TaskManagers hosted in Spark tasks (:mod:`strom.deploy.spark`).

Flink's executors of an active cluster (YARN's, Kubernetes'): a :class:`~strom.deploy.spark.SparkCluster` started
for the job on the program's SparkSession (``get_execution_environment(spark=...)``) or one strom creates for
``spark.master``. Each TaskManager holds one Spark task slot (a core in local mode) for the job's life: unless told
otherwise, a local master's cores bound the TaskManagers and the slots are packed into them. Under ``strom run``, as
``spark-submit``, strom's Spark settings are the defaults of the session the program builds
(``SparkSession.builder.config(...).getOrCreate()``, whose own settings win), and that session is the one its jobs
run on; a program that builds none gets one from strom when it executes its first job.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from strom.client.job_cluster_executor import AbstractJobClusterExecutor
from strom.client.pipeline_executor import PipelineExecutor, PipelineExecutorFactory
from strom.config import Configuration, SparkOptions, TaskManagerOptions
from strom.exceptions import ConfigurationError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from strom.deploy.active_cluster import ActiveCluster
    from strom.graph.job_graph import JobGraph

__all__ = ["SparkExecutor", "SparkExecutorFactory"]


class SparkExecutor(AbstractJobClusterExecutor):
    """A SparkCluster per job."""

    NAME = "spark"

    def _create_cluster(
        self, job_graph: JobGraph, slots: int, configuration: Configuration, spark: SparkSession | None
    ) -> ActiveCluster:
        from strom.deploy.spark import SparkCluster
        from strom.deploy.spark.session import local_cores

        c = configuration.copy()
        master = str(spark.sparkContext.master) if spark is not None else c.get(SparkOptions.MASTER)
        cores = local_cores(master)
        tms = c.get(SparkOptions.TASK_MANAGERS)
        if not tms:
            if cores is not None and not c.contains(TaskManagerOptions.NUM_TASK_SLOTS):
                tms = min(slots, cores)
                c.set(TaskManagerOptions.NUM_TASK_SLOTS, math.ceil(slots / tms))
            else:
                tms = math.ceil(slots / c.get(TaskManagerOptions.NUM_TASK_SLOTS))
        if cores is not None and tms > cores:
            raise ConfigurationError(
                f"expected at most {cores} TaskManagers on Spark master {master} (each holds one task slot for "
                f"the job's life); got {tms} for a job needing {slots} slots; hint: use local[{tms}] or more "
                f"slots per TaskManager ({TaskManagerOptions.NUM_TASK_SLOTS.key} / strom run --slots)"
            )
        return SparkCluster(c, num_task_managers=tms, spark=spark, app_name=job_graph.job_name).start()


class SparkExecutorFactory(PipelineExecutorFactory):
    name = SparkExecutor.NAME

    def get_executor(self, configuration: Configuration) -> PipelineExecutor:
        return SparkExecutor()

    def prepare_program(self, configuration: Configuration, program_name: str) -> None:
        """As ``spark-submit``: strom's settings are the defaults of the session the program builds."""
        from strom.deploy.spark.session import prepare_driver

        prepare_driver(configuration, program_name)
