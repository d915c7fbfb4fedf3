"""``TaskManagerConfiguration``: what a TaskManager starts with, mapped from the configuration in one place.

Flink's ``TaskManagerConfiguration.fromConfiguration`` (with the ``TaskExecutorResourceSpec`` idea: settled once, by
whoever launches the TaskManager). Every launcher builds it with :meth:`TaskManagerConfiguration.from_configuration`
— an :class:`~strom.deploy.active_cluster.ActiveCluster` (MiniCluster, Spark) when it is created, a standalone
``strom taskmanager`` from its configuration — and adds only what belongs to its way of hosting (the MiniCluster's
log directory of the cluster, a Spark executor's missing log file and reporter, which log records are forwarded).
A TaskManager process receives it as Flink's *dynamic properties*, ``-Dkey=value`` of the options it came from
(:meth:`~TaskManagerConfiguration.dynamic_properties`), and maps them back with the same
:meth:`~TaskManagerConfiguration.from_configuration` (:meth:`~TaskManagerConfiguration.from_dynamic_properties`).
Who the TaskManager is and whom it joins travel beside it; the cluster secret and the launch token never do (stdin).
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta

from strom.config import (
    ClusterOptions,
    Configuration,
    CoreOptions,
    ExecutionOptions,
    HeartbeatOptions,
    MetricOptions,
    NetworkOptions,
    StateBackendOptions,
    TaskManagerOptions,
    WorkingDirectoryOptions,
)
from strom.config_logging import logging_level
from strom.config_units import format_duration, format_memory_size
from strom.exceptions import ConfigurationError
from strom.runtime.metrics.prometheus import PROMETHEUS_FACTORY, PrometheusSettings, prometheus_settings
from strom.runtime.net.internal_ssl import InternalSslSettings
from strom.runtime.state.task_local_state_store import local_state_root
from strom.runtime.taskexecutor.runner import TaskManagerSpec

__all__ = ["TaskManagerConfiguration"]


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskManagerConfiguration:
    """A TaskManager's settings (Flink's ``TaskManagerConfiguration``); each field names the option it comes from."""

    #: ``taskmanager.host``: the address it binds and advertises (``auto``: this machine's)
    host: str
    #: ``taskmanager.numberOfTaskSlots``
    num_slots: int
    #: ``heartbeat.interval``
    heartbeat_interval: timedelta
    #: ``heartbeat.timeout``
    heartbeat_timeout: timedelta
    #: ``task.cancellation.timeout``
    cancellation_timeout: timedelta
    #: ``taskmanager.network.max-frame-size`` (bytes)
    max_frame_bytes: int
    #: ``taskmanager.python.switch-interval`` (milliseconds)
    switch_interval_ms: float
    #: ``logging.level`` as a :mod:`logging` level number
    log_level: int
    #: ``env.log.dir``: where its ``taskmanager-<id>.log`` goes ("": no log file)
    log_dir: str
    #: ``env.log.max``: old log files kept
    max_log_files: int
    #: ``metrics.reporter.prom.*`` (None: no reporter)
    prometheus: PrometheusSettings | None
    #: ``security.ssl.internal.*`` (None: off); its passwords never go into :meth:`dynamic_properties`
    internal_ssl: InternalSslSettings | None = None
    #: ``process.taskmanager.working-dir``, else ``process.working-dir``: the base of its working directory
    #: (``tm_<resource id>`` below it; "": the system's temp directory)
    working_dir: str = ""
    #: ``taskmanager.resource-id`` ("": its TaskManager id)
    resource_id: str = ""
    #: ``taskmanager.state.local.root-dirs`` ("": ``localState`` in its working directory)
    local_state_root_dirs: str = ""

    @classmethod
    def from_configuration(cls, config: Configuration) -> TaskManagerConfiguration:
        """The settings ``config`` gives (its ``logging.level`` and reporter are checked here)."""
        return cls(
            host=config.get(TaskManagerOptions.HOST),
            num_slots=config.get(TaskManagerOptions.NUM_TASK_SLOTS),
            heartbeat_interval=config.get(HeartbeatOptions.INTERVAL),
            heartbeat_timeout=config.get(HeartbeatOptions.TIMEOUT),
            cancellation_timeout=config.get(ExecutionOptions.CANCELLATION_TIMEOUT),
            max_frame_bytes=config.get(NetworkOptions.MAX_FRAME_BYTES),
            switch_interval_ms=config.get(TaskManagerOptions.SWITCH_INTERVAL),
            log_level=logging_level(config),
            log_dir=config.get(CoreOptions.FLINK_LOG_DIR),
            max_log_files=config.get(CoreOptions.FLINK_LOG_MAX),
            prometheus=prometheus_settings(config),
            internal_ssl=InternalSslSettings.from_configuration(config),
            working_dir=config.get(WorkingDirectoryOptions.TASK_MANAGER_WORKING_DIR_BASE)
            or config.get(WorkingDirectoryOptions.PROCESS_WORKING_DIR_BASE),
            resource_id=config.get(WorkingDirectoryOptions.TASK_MANAGER_RESOURCE_ID),
            local_state_root_dirs=config.get(StateBackendOptions.LOCAL_RECOVERY_ROOT_DIRS),
        )

    def dynamic_properties(self) -> list[str]:
        """The settings as ``key=value`` of their options, which :meth:`from_dynamic_properties` maps back to equal
        settings (Flink's ``-D`` dynamic properties of a TaskManager's command line)."""
        values: dict[str, str] = {
            TaskManagerOptions.HOST.key: self.host,
            TaskManagerOptions.NUM_TASK_SLOTS.key: str(self.num_slots),
            HeartbeatOptions.INTERVAL.key: format_duration(self.heartbeat_interval),
            HeartbeatOptions.TIMEOUT.key: format_duration(self.heartbeat_timeout),
            ExecutionOptions.CANCELLATION_TIMEOUT.key: format_duration(self.cancellation_timeout),
            NetworkOptions.MAX_FRAME_BYTES.key: format_memory_size(self.max_frame_bytes),
            TaskManagerOptions.SWITCH_INTERVAL.key: repr(float(self.switch_interval_ms)),
            ClusterOptions.LOGGING_LEVEL.key: logging.getLevelName(self.log_level),
            CoreOptions.FLINK_LOG_DIR.key: self.log_dir,
            CoreOptions.FLINK_LOG_MAX.key: str(self.max_log_files),
        }
        for key, value in (
            (WorkingDirectoryOptions.TASK_MANAGER_WORKING_DIR_BASE.key, self.working_dir),
            (WorkingDirectoryOptions.TASK_MANAGER_RESOURCE_ID.key, self.resource_id),
            (StateBackendOptions.LOCAL_RECOVERY_ROOT_DIRS.key, self.local_state_root_dirs),
        ):
            if value:
                values[key] = value
        if self.prometheus is not None:
            values[MetricOptions.PROMETHEUS_FACTORY_CLASS.key] = PROMETHEUS_FACTORY
            values[MetricOptions.PROMETHEUS_PORT.key] = self.prometheus.ports
            values[MetricOptions.PROMETHEUS_HOST.key] = self.prometheus.host
        if self.internal_ssl is not None:
            values.update(self.internal_ssl.dynamic_properties())
        return [f"{key}={value}" for key, value in values.items()]

    def sensitive_properties(self) -> dict[str, str]:
        """What :meth:`dynamic_properties` leaves out because it is a secret (the internal TLS passwords): for the
        TaskManager's standard input, beside the cluster secret."""
        return self.internal_ssl.passwords() if self.internal_ssl is not None else {}

    @classmethod
    def from_dynamic_properties(
        cls, properties: Iterable[str], sensitive: Mapping[str, str] | None = None
    ) -> TaskManagerConfiguration:
        """The settings ``key=value`` properties give, with the ``sensitive`` ones (:meth:`sensitive_properties`);
        options not among them keep their defaults."""
        config = Configuration(dict(sensitive or {}))
        for item in properties:
            key, sep, value = item.partition("=")
            if not sep:
                raise ConfigurationError(f"expected a dynamic property key=value; got {item!r}; hint: -Dkey=value")
            config.set_string(key.strip(), value)
        return cls.from_configuration(config)

    def spec(
        self,
        *,
        tm_id: str,
        launch_token: str,
        jm_address: tuple[str, int],
        forward_logs_level: int | None = None,
        forward_job_logs_only: bool = False,
    ) -> TaskManagerSpec:
        """What :func:`~strom.runtime.taskexecutor.runner.run_task_manager` starts TaskManager ``tm_id`` with.
        ``forward_logs_level``: forward log records at or above it to the JobManager (None: do not); with
        ``forward_job_logs_only`` only those of task threads (a standalone TaskManager). Its resource id is
        ``taskmanager.resource-id`` or ``tm_id``; its working directory ``tm_<resource id>`` below the base."""
        resource_id = self.resource_id or tm_id
        working_dir = os.path.join(os.path.abspath(self.working_dir or tempfile.gettempdir()), f"tm_{resource_id}")
        return TaskManagerSpec(
            tm_id=tm_id,
            resource_id=resource_id,
            working_dir=working_dir,
            local_state_root=local_state_root(self.local_state_root_dirs, working_dir),
            launch_token=launch_token,
            jm_address=jm_address,
            host=self.host,
            num_slots=self.num_slots,
            heartbeat_interval=self.heartbeat_interval.total_seconds(),
            heartbeat_timeout=self.heartbeat_timeout.total_seconds(),
            cancellation_timeout=self.cancellation_timeout.total_seconds(),
            max_frame_bytes=self.max_frame_bytes,
            switch_interval_ms=self.switch_interval_ms,
            forward_logs_level=forward_logs_level,
            forward_job_logs_only=forward_job_logs_only,
            prometheus=self.prometheus,
            log_dir=self.log_dir,
            max_log_files=self.max_log_files,
            internal_ssl=self.internal_ssl,
        )
