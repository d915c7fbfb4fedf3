"""``PipelineExecutor`` and ``PipelineExecutorFactory``: how a JobGraph is run on one ``execution.target``.

Flink's ``org.apache.flink.core.execution.PipelineExecutor(Factory)``: the environment builds the JobGraph and asks
the :class:`~strom.client.executor_service_loader.PipelineExecutorServiceLoader` for the factory compatible with its
configuration; the factory's executor runs the job and returns a :class:`~strom.client.job_client.JobClient`. The
environment knows no target by name.

One departure: Flink's ``execute`` also takes the user-code class loader; strom's takes what the program may have
brought instead of it, the SparkSession given to ``get_execution_environment(spark=...)``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, ClassVar

from strom.config import Configuration, DeploymentOptions

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from strom.client.job_client import JobClient
    from strom.graph.job_graph import JobGraph

__all__ = ["PipelineExecutor", "PipelineExecutorFactory"]


class PipelineExecutor(ABC):
    """Runs one job on one kind of cluster (Flink's ``PipelineExecutor``)."""

    @abstractmethod
    def execute(
        self, job_graph: JobGraph, configuration: Configuration, *, spark: SparkSession | None = None
    ) -> JobClient:
        """Submit ``job_graph`` and return at once with its client (the job runs on). ``spark``: the program's
        SparkSession, if it gave one."""


class PipelineExecutorFactory(ABC):
    """Makes the executor of the target it is named after (Flink's ``PipelineExecutorFactory``)."""

    #: the ``execution.target`` this factory serves (Flink's ``getName()``)
    name: ClassVar[str]
    #: whether ``execute_and_collect`` can read the job's output through the executor's JobClient
    collects_results: ClassVar[bool] = True

    def is_compatible_with(self, configuration: Configuration) -> bool:
        """Whether ``configuration`` asks for this factory's target (``execution.target``)."""
        return configuration.get(DeploymentOptions.TARGET) == self.name

    @abstractmethod
    def get_executor(self, configuration: Configuration) -> PipelineExecutor:
        """The executor (a new one: executors keep no state between jobs)."""

    def prepare_program(self, configuration: Configuration, program_name: str) -> None:
        """Before ``strom run`` runs a program on this target: what must be in place for the program itself.
        Default: nothing."""
