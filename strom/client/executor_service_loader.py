"""``PipelineExecutorServiceLoader``: the executor factory an ``execution.target`` names.

Flink's ``DefaultExecutorServiceLoader`` finds the factories with Java's ``ServiceLoader`` and picks the one whose
``isCompatibleWith(configuration)`` holds; strom's factories sit in a dict, name → factory, in the order the targets
are documented (local, spark, remote). None compatible: a :class:`~strom.exceptions.ConfigurationError` naming the
targets; more than one: an error too (two factories claiming one target is a bug, as in Flink).
"""

from __future__ import annotations

from collections.abc import Mapping

from strom.client.local_executor import LocalExecutorFactory
from strom.client.pipeline_executor import PipelineExecutorFactory
from strom.client.remote_executor import RemoteExecutorFactory
from strom.client.spark_executor import SparkExecutorFactory
from strom.config import Configuration, DeploymentOptions
from strom.exceptions import ConfigurationError

__all__ = ["DEFAULT_EXECUTOR_SERVICE_LOADER", "PipelineExecutorServiceLoader"]


class PipelineExecutorServiceLoader:
    """The executor factories, by the target each serves (Flink's ``PipelineExecutorServiceLoader``)."""

    def __init__(self, factories: Mapping[str, PipelineExecutorFactory]) -> None:
        self._factories = dict(factories)

    def get_executor_names(self) -> tuple[str, ...]:
        """The targets there are executors for (Flink's ``getExecutorNames()``)."""
        return tuple(self._factories)

    def get_executor_factory(self, configuration: Configuration) -> PipelineExecutorFactory:
        """The one factory compatible with ``configuration``."""
        compatible = [f for f in self._factories.values() if f.is_compatible_with(configuration)]
        if len(compatible) == 1:
            return compatible[0]
        key = DeploymentOptions.TARGET.key
        target = configuration.get(DeploymentOptions.TARGET)
        if not compatible:
            raise ConfigurationError(
                f"expected {key} to be one of {', '.join(self._factories)}; got '{target}'; hint: set it with "
                f"-D {key}=... (strom run --target), or leave it unset for an embedded MiniCluster"
            )
        names = ", ".join(type(f).__name__ for f in compatible)
        raise ConfigurationError(
            f"expected one executor factory compatible with {key} '{target}'; got {len(compatible)}: {names}; "
            "hint: each target must be served by exactly one factory"
        )

    def targets_collecting_results(self) -> tuple[str, ...]:
        """The targets whose JobClient ``execute_and_collect`` can read the job's output through."""
        return tuple(name for name, f in self._factories.items() if f.collects_results)


#: strom's executors: an embedded MiniCluster, TaskManagers hosted by Spark, a running cluster over REST
DEFAULT_EXECUTOR_SERVICE_LOADER = PipelineExecutorServiceLoader(
    {
        LocalExecutorFactory.name: LocalExecutorFactory(),
        SparkExecutorFactory.name: SparkExecutorFactory(),
        RemoteExecutorFactory.name: RemoteExecutorFactory(),
    }
)
