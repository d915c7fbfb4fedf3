"""``RemoteExecutor``: ``execution.target: remote`` — the job submitted over REST to a running cluster.

Flink's ``RemoteExecutor`` (an ``AbstractSessionClusterExecutor``): as ``flink run`` does, the program runs in the
client and builds the JobGraph; the executor pickles it (cloudpickle) and posts it with the job's Python files
(:mod:`strom.deploy.standalone.job_files`) to the JobManager's ``POST /jobs``, and returns a
:class:`~strom.client.remote_job_client.RemoteJobClient`. The cluster is found at ``rest.address``/``rest.port`` when
either is configured, else where the HA lease or the cluster directory's JobManager serves (``$STROM_CLUSTER_DIR`` or
``~/.strom/cluster``), else at ``127.0.0.1:8081``; the token comes from ``$STROM_REST_TOKEN`` or the cluster
directory's secret. With ``security.ssl.rest.enabled`` the client calls ``https://`` with the configuration's
truststore (and keystore). ``execute_and_collect`` is refused on this target: the output of a job on a cluster goes
to a sink.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from strom.client.pipeline_executor import PipelineExecutor, PipelineExecutorFactory
from strom.client.remote_job_client import RemoteJobClient
from strom.config import Configuration, DeploymentOptions, RestOptions

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from strom.graph.job_graph import JobGraph

__all__ = [
    "SUBMISSION_LISTENERS",
    "RemoteExecutor",
    "RemoteExecutorFactory",
    "high_availability_of",
    "remote_rest_url",
]

log = logging.getLogger(__name__)

#: called with every job a :class:`RemoteExecutor` submitted (``strom run`` prints its id and shows its progress)
SUBMISSION_LISTENERS: list[Callable[[RemoteJobClient], None]] = []


def remote_rest_url(config: Configuration) -> str:
    """The REST URL of the cluster ``config`` names (see the module docstring)."""
    if config.contains(RestOptions.ADDRESS) or config.contains(RestOptions.PORT):
        from strom.deploy.standalone.rest_client import rest_url

        return rest_url(config.get(RestOptions.ADDRESS) or "127.0.0.1", config.get(RestOptions.PORT), config)
    from strom.runtime.highavailability.services import ha_settings, read_leader

    settings = ha_settings(config)
    if settings is not None:  # HA: the leader the lease names (Flink's leader retrieval)
        lease = read_leader(settings)
        if lease is not None and lease.rest_url:
            return lease.rest_url
    from strom.deploy.standalone.cluster_dir import ClusterDirectory, default_cluster_dir

    addresses = ClusterDirectory(default_cluster_dir()).read_addresses()
    return addresses.rest_url if addresses is not None else f"http://127.0.0.1:{RestOptions.PORT.default}"


def high_availability_of(config: Configuration) -> Any:
    """The HA settings a client follows the leader with: ``config``'s ``high-availability.*``, else — without a
    fixed ``rest.address``/``rest.port`` — those the cluster directory's ``strom cluster start`` recorded; None."""
    from strom.runtime.highavailability.services import ha_settings

    settings = ha_settings(config)
    if settings is not None or config.contains(RestOptions.ADDRESS) or config.contains(RestOptions.PORT):
        return settings
    from strom.deploy.standalone.cluster_dir import ClusterDirectory, default_cluster_dir
    from strom.deploy.standalone.job_managers import recorded_high_availability

    return recorded_high_availability(ClusterDirectory(default_cluster_dir()))


class RemoteExecutor(PipelineExecutor):
    """Submits the job with the program's Python files to the cluster the configuration names."""

    NAME = "remote"

    def execute(
        self, job_graph: JobGraph, configuration: Configuration, *, spark: SparkSession | None = None
    ) -> RemoteJobClient:
        import cloudpickle

        from strom.config_logging import logging_level
        from strom.deploy.standalone.cluster_dir import ClusterDirectory, default_cluster_dir
        from strom.deploy.standalone.job_files import describe, pack_python_files, program_directory
        from strom.deploy.standalone.rest_client import RestClusterClient, resolve_token

        config = configuration
        rest = RestClusterClient.from_configuration(  # https with security.ssl.rest.* (the truststore, a client cert)
            remote_rest_url(config), config, token=resolve_token(None, ClusterDirectory(default_cluster_dir()))
        )
        graph = cloudpickle.dumps(job_graph, protocol=5)
        files = pack_python_files(program_directory())
        log.info(
            "submitting job '%s' to %s (%d bytes, Python files: %s)",
            job_graph.job_name,
            rest.base_url,
            len(graph),
            describe(files),
        )
        rest.high_availability = high_availability_of(config)
        job_id = rest.submit_job(graph, files, job_id=job_graph.job_id)
        client = RemoteJobClient(rest, job_id, job_graph.job_name, attached=config.get(DeploymentOptions.ATTACHED))
        client.log_level = logging_level(config)
        for listener in list(SUBMISSION_LISTENERS):
            listener(client)
        return client


class RemoteExecutorFactory(PipelineExecutorFactory):
    name = RemoteExecutor.NAME
    collects_results = False

    def get_executor(self, configuration: Configuration) -> PipelineExecutor:
        return RemoteExecutor()
