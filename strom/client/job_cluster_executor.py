"""``AbstractJobClusterExecutor``: a cluster started for one job, owned by the job's client.

Flink's ``AbstractJobClusterExecutor`` (and the MiniCluster's ``PerJobMiniClusterFactory``): deploy a cluster sized
for the job, submit the job to its Dispatcher and return a :class:`~strom.client.job_client.JobClient` that closes the
cluster once the job ends. A submission that fails closes the cluster at once; a Ctrl-C while the cluster starts is
marked so that the program ends with one line, ``job '<name>' (<id>) cancelled``. The subclass says which cluster:
:class:`~strom.client.local_executor.LocalExecutor` an embedded MiniCluster,
:class:`~strom.client.spark_executor.SparkExecutor` TaskManagers hosted by Spark.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING

from strom.client.job_client import JobClient, mark_job_interrupted
from strom.client.pipeline_executor import PipelineExecutor
from strom.client.startup_split import ClientStamps
from strom.config import Configuration
from strom.runtime.scheduler.default_scheduler import slots_required

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from strom.deploy.active_cluster import ActiveCluster
    from strom.graph.job_graph import JobGraph

__all__ = ["AbstractJobClusterExecutor"]


class AbstractJobClusterExecutor(PipelineExecutor):
    """Starts a cluster for the job, submits it there, hands the cluster to the job's client."""

    @abstractmethod
    def _create_cluster(
        self, job_graph: JobGraph, slots: int, configuration: Configuration, spark: SparkSession | None
    ) -> ActiveCluster:
        """A started cluster with at least ``slots`` task slots (refusals before anything starts)."""

    def execute(
        self, job_graph: JobGraph, configuration: Configuration, *, spark: SparkSession | None = None
    ) -> JobClient:
        slots = slots_required(job_graph)
        stamps = ClientStamps(submitting=ClientStamps.now())
        try:
            cluster = self._create_cluster(job_graph, slots, configuration, spark)
            stamps.cluster_started = ClientStamps.now()
            try:
                assert cluster.dispatcher is not None
                job_id = cluster.run(cluster.dispatcher.submit_job(job_graph))
                stamps.submitted = ClientStamps.now()
            except BaseException:
                cluster.close()
                raise
        except KeyboardInterrupt as interrupt:  # Ctrl-C while the cluster starts (it closed on its way out)
            mark_job_interrupted(interrupt, f"'{job_graph.job_name}' ({job_graph.job_id})")
            raise
        return JobClient(cluster, job_id, job_graph.job_name, stamps=stamps)
