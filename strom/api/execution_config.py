"""PyFlink's ``ExecutionConfig`` (``env.get_config()``): the program's execution settings, a view over the
environment's :class:`~strom.config.Configuration` (``env.get_configuration()``) under Flink's keys.

    env.get_config().set_auto_watermark_interval(200)      # pipeline.auto-watermark-interval: 200 ms
    env.get_config().set_global_job_parameters({"region": "eu"})   # RuntimeContext.get_job_parameter("region", "")

Settings of Flink's JVM type system (Kryo, POJOs, Avro, generic types, the closure cleaner) are accepted and have
nothing to act on: strom pickles Python objects. Object reuse is what strom always does between chained operators
(records are passed on, not copied); the flag is kept for ``is_object_reuse_enabled``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from strom.api._time import duration_argument
from strom.config import CoreOptions, ExecutionOptions, PipelineOptions

if TYPE_CHECKING:
    from strom.api.environment import StreamExecutionEnvironment

__all__ = ["ExecutionConfig"]

log = logging.getLogger(__name__)


def _millis(value: timedelta) -> int:
    return value // timedelta(milliseconds=1)


class ExecutionConfig:
    """The execution settings of one environment (PyFlink's ``ExecutionConfig``)."""

    #: ``set_parallelism(PARALLELISM_DEFAULT)``: back to the environment's default parallelism
    PARALLELISM_DEFAULT = -1
    PARALLELISM_UNKNOWN = -2

    def __init__(self, env: StreamExecutionEnvironment) -> None:
        self._env = env
        self._object_reuse = False
        self._closure_cleaner = True
        self._generic_types = True
        self._force_kryo = False
        self._force_avro = False

    @property
    def _config(self) -> Any:
        return self._env.get_configuration()

    # -- parallelism --------------------------------------------------------------------------------------------
    def get_parallelism(self) -> int:
        """``parallelism.default`` when set, else :data:`PARALLELISM_DEFAULT` (the environment's default)."""
        c = self._config
        return c.get(CoreOptions.DEFAULT_PARALLELISM) if c.contains(CoreOptions.DEFAULT_PARALLELISM) else -1

    def set_parallelism(self, parallelism: int) -> ExecutionConfig:
        if parallelism == self.PARALLELISM_DEFAULT:
            self._config.remove_config(CoreOptions.DEFAULT_PARALLELISM.key)
        else:
            self._env.set_parallelism(parallelism)
        return self

    def get_max_parallelism(self) -> int:
        return self._env.get_max_parallelism()

    def set_max_parallelism(self, max_parallelism: int) -> ExecutionConfig:
        self._env.set_max_parallelism(max_parallelism)
        return self

    # -- time -----------------------------------------------------------------------------------------------------
    def set_auto_watermark_interval(self, interval: int) -> ExecutionConfig:
        """``pipeline.auto-watermark-interval`` in milliseconds (0 disables periodic watermarks)."""
        value = duration_argument(PipelineOptions.AUTO_WATERMARK_INTERVAL, interval, "a watermark interval")
        self._config.set(PipelineOptions.AUTO_WATERMARK_INTERVAL, value)
        return self

    def get_auto_watermark_interval(self) -> int:
        return _millis(self._config.get(PipelineOptions.AUTO_WATERMARK_INTERVAL))

    def set_task_cancellation_timeout(self, timeout: int) -> ExecutionConfig:
        """``task.cancellation.timeout`` in milliseconds (0 disables the watchdog)."""
        value = duration_argument(ExecutionOptions.CANCELLATION_TIMEOUT, timeout, "a cancellation timeout")
        self._config.set(ExecutionOptions.CANCELLATION_TIMEOUT, value)
        return self

    def get_task_cancellation_timeout(self) -> int:
        return _millis(self._config.get(ExecutionOptions.CANCELLATION_TIMEOUT))

    # -- global job parameters ------------------------------------------------------------------------------------
    def set_global_job_parameters(self, global_job_parameters_dict: Mapping[str, str]) -> ExecutionConfig:
        """``pipeline.global-job-parameters``: read by every function with ``RuntimeContext.get_job_parameter``."""
        self._config.set(
            PipelineOptions.GLOBAL_JOB_PARAMETERS, {str(k): str(v) for k, v in global_job_parameters_dict.items()}
        )
        return self

    def get_global_job_parameters(self) -> dict[str, str]:
        return dict(self._config.get(PipelineOptions.GLOBAL_JOB_PARAMETERS))

    # -- object reuse ---------------------------------------------------------------------------------------------
    def enable_object_reuse(self) -> ExecutionConfig:
        self._object_reuse = True
        return self

    def disable_object_reuse(self) -> ExecutionConfig:
        self._object_reuse = False
        return self

    def is_object_reuse_enabled(self) -> bool:
        return self._object_reuse

    # -- Flink's JVM type system: nothing to act on in Python -----------------------------------------------------
    def enable_closure_cleaner(self) -> ExecutionConfig:
        self._closure_cleaner = True
        return self

    def disable_closure_cleaner(self) -> ExecutionConfig:
        self._closure_cleaner = False
        return self

    def is_closure_cleaner_enabled(self) -> bool:
        return self._closure_cleaner

    def enable_generic_types(self) -> ExecutionConfig:
        self._generic_types = True
        return self

    def disable_generic_types(self) -> ExecutionConfig:
        self._generic_types = False
        return self

    def has_generic_types_disabled(self) -> bool:
        return not self._generic_types

    def enable_force_kryo(self) -> ExecutionConfig:
        self._force_kryo = True
        return self

    def disable_force_kryo(self) -> ExecutionConfig:
        self._force_kryo = False
        return self

    def is_force_kryo_enabled(self) -> bool:
        return self._force_kryo

    def enable_force_avro(self) -> ExecutionConfig:
        self._force_avro = True
        return self

    def disable_force_avro(self) -> ExecutionConfig:
        self._force_avro = False
        return self

    def is_force_avro_enabled(self) -> bool:
        return self._force_avro

    def _jvm_only(self, call: str, *args: object) -> ExecutionConfig:
        log.info("%s%r configures Flink's JVM serializers; strom pickles Python objects: ignored", call, args)
        return self

    def add_default_kryo_serializer(self, type_class_name: str, serializer_class_name: str) -> ExecutionConfig:
        return self._jvm_only("add_default_kryo_serializer", type_class_name, serializer_class_name)

    def register_type_with_kryo_serializer(self, type_class_name: str, serializer_class_name: str) -> ExecutionConfig:
        return self._jvm_only("register_type_with_kryo_serializer", type_class_name, serializer_class_name)

    def register_pojo_type(self, type_class_name: str) -> ExecutionConfig:
        return self._jvm_only("register_pojo_type", type_class_name)

    def register_kryo_type(self, type_class_name: str) -> ExecutionConfig:
        return self._jvm_only("register_kryo_type", type_class_name)
