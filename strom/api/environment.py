"""``StreamExecutionEnvironment``: where a DataStream program starts and how it is executed.

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.from_sequence(1, 100).map(lambda x: x * x).print()
    env.execute("squares")

``execute()`` compiles the program (StreamGraph → JobGraph), hands the JobGraph to the executor of
``execution.target`` (:mod:`strom.client`, Flink's ``PipelineExecutor``) and waits for the result — or raises
:class:`~strom.exceptions.JobExecutionError` with the root cause. ``local`` (default) starts an embedded MiniCluster
with as many TaskManagers as the job needs and stops it when the job ends; ``spark`` hosts them in Spark tasks
(:mod:`strom.deploy.spark`), on the SparkSession given to :meth:`get_execution_environment` or one strom creates for
``spark.master``; ``remote`` submits the job over REST to a running cluster.
"""

from __future__ import annotations

import logging
import os
import sys
import uuid
from collections.abc import Iterable
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from strom.api._time import duration_argument
from strom.api.checkpoint_config import CheckpointConfig, CheckpointingMode
from strom.api.datastream import DataStream, declared_type
from strom.api.eventtime import BatchWatermarkStrategy, WatermarkStrategy
from strom.api.execution_config import ExecutionConfig
from strom.api.execution_mode import RuntimeExecutionMode
from strom.api.output_tag import output_tags_created
from strom.api.source import Boundedness, Source
from strom.api.state_backend import EmbeddedRocksDBStateBackend, HashMapStateBackend, StateBackend, backend_type
from strom.api.transformations import SourceTransformation, Transformation, operator_of
from strom.api.typeinfo import TypeInformation
from strom.client.executor_service_loader import DEFAULT_EXECUTOR_SERVICE_LOADER
from strom.client.job_client import CloseableIterator, JobClient, JobExecutionResult
from strom.client.local_executor import LocalExecutor
from strom.client.remote_job_client import RemoteJobClient
from strom.config import (
    BatchExecutionOptions,
    CheckpointingOptions,
    Configuration,
    CoreOptions,
    DeploymentOptions,
    ExecutionOptions,
    NetworkOptions,
    PipelineOptions,
    PythonOptions,
    StateBackendOptions,
    millis,
)
from strom.config_logging import configure_client_logging
from strom.config_option import ConfigOption
from strom.connectors.collection import CollectionSource
from strom.connectors.number_sequence import NumberSequenceSource
from strom.exceptions import InvalidProgramError
from strom.graph.job_graph import JobGraph, StreamingJobGraphGenerator
from strom.graph.local_aggregation import insert_local_aggregation
from strom.graph.stream_graph import StreamGraph, StreamGraphGenerator
from strom.runtime.network.buffer_compressor import check_codec
from strom.runtime.operators.keyed import StreamGroupedReduce
from strom.runtime.operators.source import SourceOperator
from strom.runtime.operators.timestamps_and_watermarks import TimestampsAndWatermarksOperator
from strom.runtime.operators.typed_output import type_mismatch
from strom.runtime.python_dependency_info import PYTHON_DEPENDENCIES_KEY, PythonDependencyInfo
from strom.runtime.state.state_backend import state_backend_options, validate_state_backend

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


__all__ = ["StreamExecutionEnvironment", "make_importable"]

log = logging.getLogger(__name__)


def _for_batch(strategy: WatermarkStrategy[Any]) -> WatermarkStrategy[Any]:
    return strategy if isinstance(strategy, BatchWatermarkStrategy) else BatchWatermarkStrategy(strategy)


def local_parallelism() -> int:
    """The CPU cores this process may run on (``Runtime.availableProcessors()`` in Flink)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class StreamExecutionEnvironment:
    #: set by ``strom run`` (Flink's context environment): the defaults of every environment the program makes
    _context_configuration: Configuration | None = None
    #: jobs this process submitted (``strom run`` tells a program that submitted none, as Flink's CLI does)
    submitted_jobs = 0

    def __init__(self, configuration: Configuration | None = None, *, spark: SparkSession | None = None) -> None:
        base = StreamExecutionEnvironment._context_configuration
        self._config = base.copy() if base is not None else Configuration()
        for key, value in (configuration.to_dict() if configuration is not None else {}).items():
            self._config.set_string(key, value)
        self._transformations: list[Transformation] = []
        self._spark = spark
        if spark is not None:
            self._config.set(DeploymentOptions.TARGET, "spark")
        configure_client_logging(self._config)  # strom's records follow logging.level from here on
        self._execution_config = ExecutionConfig(self)

    @staticmethod
    def get_execution_environment(
        configuration: Configuration | None = None, *, spark: SparkSession | None = None
    ) -> StreamExecutionEnvironment:
        """The environment of this program. ``spark``: run on that SparkSession (TaskManagers hosted in its
        executors) instead of an embedded MiniCluster; see docs/deploy-spark.md."""
        return StreamExecutionEnvironment(configuration, spark=spark)

    @classmethod
    def set_context_configuration(cls, configuration: Configuration | None) -> None:
        """Defaults for every environment created from now on in this process (``strom run`` sets them)."""
        cls._context_configuration = configuration.copy() if configuration is not None else None

    # -- configuration -----------------------------------------------------------------------------
    def get_config(self) -> ExecutionConfig:
        """PyFlink's ``ExecutionConfig`` of this environment (a view over :meth:`get_configuration`)."""
        return self._execution_config

    def get_configuration(self) -> Configuration:
        """The environment's configuration (Flink's ``getConfiguration()``): every option under Flink's keys."""
        return self._config

    def set_parallelism(self, parallelism: int) -> StreamExecutionEnvironment:
        """The default parallelism of the job's operators (Flink's ``setParallelism``, ``parallelism.default``); an
        operator's own :meth:`DataStream.set_parallelism` wins.

        >>> env = env.set_parallelism(2)
        >>> env.get_parallelism()
        2
        """
        if not isinstance(parallelism, int) or isinstance(parallelism, bool) or parallelism < 1:
            raise InvalidProgramError(f"parallelism must be a positive int; got {parallelism!r}")
        self._config.set(CoreOptions.DEFAULT_PARALLELISM, parallelism)
        return self

    def get_parallelism(self) -> int:
        """``parallelism.default`` when configured; otherwise, on the local MiniCluster, the number of CPU cores
        this process may run on (Flink's ``LocalStreamEnvironment``), and 1 elsewhere (Flink's default)."""
        c = self._config
        if c.contains(CoreOptions.DEFAULT_PARALLELISM) or c.get(DeploymentOptions.TARGET) != LocalExecutor.NAME:
            return c.get(CoreOptions.DEFAULT_PARALLELISM)
        return local_parallelism()

    def set_max_parallelism(self, max_parallelism: int) -> StreamExecutionEnvironment:
        """The default maximum parallelism, 1 to 32768 (Flink's ``setMaxParallelism``, ``pipeline.max-parallelism``):
        the number of key groups of keyed state, the highest parallelism a savepoint can be rescaled to.

        >>> env.set_max_parallelism(128).get_max_parallelism()
        128
        """
        if not isinstance(max_parallelism, int) or not 1 <= max_parallelism <= 32768:
            raise InvalidProgramError(f"max parallelism must be an int in [1, 32768]; got {max_parallelism!r}")
        self._config.set(CoreOptions.MAX_PARALLELISM, max_parallelism)
        return self

    def get_max_parallelism(self) -> int:
        """The default maximum parallelism (Flink's ``getMaxParallelism``; ``pipeline.max-parallelism``, 128 unless
        set).

        >>> env.set_max_parallelism(256).get_max_parallelism()
        256
        """
        return self._config.get(CoreOptions.MAX_PARALLELISM)

    def set_buffer_timeout(self, timeout_millis: int | timedelta | str) -> StreamExecutionEnvironment:
        """Flush partly filled output buffers after this long (ms, a ``timedelta`` or ``"10 ms"``); 0 flushes
        every batch at once."""
        timeout = duration_argument(ExecutionOptions.BUFFER_TIMEOUT, timeout_millis, "a buffer timeout >= 0")
        if timeout < timedelta(0):
            raise InvalidProgramError(f"expected a buffer timeout >= 0 (ms); got {timeout_millis!r}")
        self._config.set(ExecutionOptions.BUFFER_TIMEOUT, timeout)
        return self

    def get_buffer_timeout(self) -> int:
        """The buffer timeout in milliseconds."""
        return millis(self._config.get(ExecutionOptions.BUFFER_TIMEOUT))

    # -- checkpointing -----------------------------------------------------------------------------
    def enable_checkpointing(
        self, interval_ms: int | timedelta | str, mode: CheckpointingMode = CheckpointingMode.EXACTLY_ONCE
    ) -> StreamExecutionEnvironment:
        """Checkpoint every ``interval_ms`` (ms, a ``timedelta`` or ``"10 s"``): state becomes exactly-once (or
        at-least-once) across failures."""
        cfg = self.get_checkpoint_config()
        cfg.set_checkpoint_interval(interval_ms)
        cfg.set_checkpointing_mode(mode)
        return self

    def get_checkpoint_config(self) -> CheckpointConfig:
        """The checkpointing settings of this environment (Flink's ``CheckpointConfig``), a view over its configuration.

        >>> env.get_checkpoint_config().set_checkpoint_interval(10_000)
        >>> env.get_checkpoint_interval()
        10000
        """
        return CheckpointConfig(self._config)

    def disable_operator_chaining(self) -> StreamExecutionEnvironment:
        """Run every operator as a task of its own (Flink's ``disableOperatorChaining``): records between operators
        travel through the network stack.

        >>> env = env.disable_operator_chaining()
        """
        self._config.set(PipelineOptions.OPERATOR_CHAINING, False)
        return self

    # -- sources -----------------------------------------------------------------------------------
    def from_collection(self, collection: Iterable[Any], type_info: TypeInformation | None = None) -> DataStream[Any]:
        """The elements of ``collection``, in order, from a non-parallel source; with ``type_info`` converted to
        that type here in the client (``Types.ROW_NAMED(...)`` gives named ``Row``\\ s, ``Types.FLOAT()`` 32-bit
        floats), as PyFlink does."""
        if isinstance(collection, str | bytes) or not isinstance(collection, Iterable):
            raise InvalidProgramError(
                f"from_collection expects a list or other iterable of elements; got a {type(collection).__name__}; "
                "hint: wrap a single value in a list"
            )
        elements = list(collection)
        declared = declared_type(type_info, "from_collection()")
        if declared is not None and not declared.is_pickled():
            convert = declared.converter()
            for i, element in enumerate(elements):
                try:
                    elements[i] = convert(element)
                except (TypeError, ValueError, OverflowError) as exc:
                    raise InvalidProgramError(
                        type_mismatch(exc, element, declared, f"of from_collection() (element #{i})")
                    ) from None
        stream = self.from_source(CollectionSource(elements), source_name="Collection Source")
        stream.get_transformation().output_type = declared  # converted above: the source emits them as they are
        return stream

    def from_sequence(self, start: int, end: int) -> DataStream[int]:
        """The integers ``start..end`` inclusive, generated in parallel by the source subtasks."""
        return self.from_source(NumberSequenceSource(start, end), source_name="Sequence Source")

    def read_text_file(self, file_path: str, charset_name: str = "UTF-8") -> DataStream[str]:
        """The lines of the file (or the files under the directory; any fsspec URL) as ``str`` without their
        terminators, as PyFlink's ``read_text_file``: a bounded ``FileSource`` of the text line format."""
        from strom.connectors.file_system.source import FileSource
        from strom.connectors.file_system.stream_format import StreamFormat

        source: FileSource[str] = FileSource.for_record_stream_format(
            StreamFormat.text_line_format(charset_name), file_path
        ).build()
        return self.from_source(source, source_name=f"File Source {file_path}")

    def from_source(
        self,
        source: Source[Any],
        watermark_strategy: Any = None,
        source_name: str = "Custom Source",
        type_info: TypeInformation | None = None,
    ) -> DataStream[Any]:
        """The records of ``source``; with ``type_info`` they are converted to that type as they leave it."""
        if not isinstance(source, Source):
            raise InvalidProgramError(
                f"from_source expects a strom Source; got a {type(source).__name__}; "
                "hint: subclass strom.Source or use from_collection / from_sequence"
            )
        if watermark_strategy is not None and not isinstance(watermark_strategy, WatermarkStrategy):
            raise InvalidProgramError(
                f"from_source expects a WatermarkStrategy (or None); got a {type(watermark_strategy).__name__}; "
                "hint: WatermarkStrategy.for_bounded_out_of_orderness(timedelta(seconds=5))"
                ".with_timestamp_assigner(lambda event, ts: event.time_ms)"
            )
        operator = SourceOperator(source, watermark_strategy)
        t = SourceTransformation(f"Source: {source_name}", operator, parallel=source.parallel)
        t.output_type = operator.output_type = declared_type(type_info, "from_source()")
        produced = getattr(source, "get_produced_type", None)
        if type_info is None and callable(produced):
            # Flink's ResultTypeQueryable source: its records are of its type already (no conversion)
            t.output_type = produced()
        if not source.parallel:
            t.parallelism = 1
        self._transformations.append(t)
        return DataStream(self, t)

    def _add_operator(self, t: Transformation) -> None:
        self._transformations.append(t)

    # -- compilation -------------------------------------------------------------------------------
    # -- PyFlink's environment calls --------------------------------------------------------------------
    def configure(self, configuration: Configuration) -> StreamExecutionEnvironment:
        """Set every option of ``configuration`` on this environment (Flink's ``configure``)."""
        self._config.add_all(configuration)
        return self

    def get_checkpoint_interval(self) -> int:
        """The checkpoint interval in milliseconds (Flink's ``getCheckpointInterval``; 0: checkpointing is off).

        >>> env.enable_checkpointing(5_000).get_checkpoint_interval()
        5000
        """
        return self.get_checkpoint_config().get_checkpoint_interval()

    def get_checkpointing_mode(self) -> CheckpointingMode:
        """EXACTLY_ONCE (aligned barriers) or AT_LEAST_ONCE (Flink's ``getCheckpointingMode``).

        >>> env.enable_checkpointing(5_000).get_checkpointing_mode().name
        'EXACTLY_ONCE'
        """
        return self.get_checkpoint_config().get_checkpointing_mode()

    def is_chaining_enabled(self) -> bool:
        """Whether operators are chained into tasks (Flink's ``isChainingEnabled``, ``pipeline.operator-chaining``).

        >>> env.disable_operator_chaining().is_chaining_enabled()
        False
        """
        return bool(self._config.get(PipelineOptions.OPERATOR_CHAINING))

    def is_unaligned_checkpoints_enabled(self) -> bool:
        """Whether checkpoint barriers may overtake buffered records (Flink's unaligned checkpoints).

        >>> env.enable_checkpointing(5_000).is_unaligned_checkpoints_enabled()
        False
        """
        return self.get_checkpoint_config().is_unaligned_checkpoints_enabled()

    def get_default_local_parallelism(self) -> int:
        """The local MiniCluster's parallelism when none is configured: the CPU cores."""
        return local_parallelism()

    def close(self) -> None:
        """Nothing to release: every ``execute()`` starts and stops its own cluster."""

    def set_state_backend(self, state_backend: StateBackend) -> StreamExecutionEnvironment:
        """Where keyed state lives (Flink's ``setStateBackend``): ``HashMapStateBackend()`` (the heap,
        ``state.backend.type: hashmap``) or ``EmbeddedRocksDBStateBackend()`` (``rocksdb``)."""
        self._config.set(StateBackendOptions.STATE_BACKEND, backend_type(state_backend))
        for option, value in state_backend.configuration():
            self._config.set(option, value)
        return self

    def get_state_backend(self) -> StateBackend:
        """Where keyed state lives (Flink's ``getStateBackend``): the backend :meth:`set_state_backend` or
        ``state.backend.type`` chose (``HashMapStateBackend`` by default).

        >>> type(env.get_state_backend()).__name__
        'HashMapStateBackend'
        """
        chosen = validate_state_backend(self._config.get(StateBackendOptions.STATE_BACKEND))
        return (
            EmbeddedRocksDBStateBackend() if chosen == EmbeddedRocksDBStateBackend.type_name else HashMapStateBackend()
        )

    def add_jars(self, *jars_path: str) -> StreamExecutionEnvironment:
        """Accepted and ignored: strom runs no JVM, so there is nothing to put JARs on (Kafka and other
        JVM connectors are not available)."""
        log.info("add_jars(%s): strom runs no JVM; ignored", ", ".join(jars_path))
        return self

    def add_classpaths(self, *classpaths: str) -> StreamExecutionEnvironment:
        """Accepted and ignored, as :meth:`add_jars`."""
        log.info("add_classpaths(%s): strom runs no JVM; ignored", ", ".join(classpaths))
        return self

    def set_python_executable(self, python_exec: str) -> StreamExecutionEnvironment:
        """Accepted and ignored: TaskManagers run the client's interpreter (``sys.executable``)."""
        log.info("set_python_executable(%s): TaskManagers run the client's interpreter; ignored", python_exec)
        return self

    def set_python_requirements(
        self, requirements_file_path: str, requirements_cache_dir: str | None = None
    ) -> StreamExecutionEnvironment:
        """The job's third-party packages, as PyFlink's: every TaskManager that runs a task of the job installs
        ``requirements_file_path`` (``pip install --target``) into an environment on its tasks' ``sys.path``, made
        once per machine for the same requirements (``python.requirements``). ``requirements_cache_dir``: a
        directory of the packages (``pip download -d DIR -r requirements.txt``), shipped with the job and installed
        from without a package index, for TaskManagers that reach none.

        >>> import pathlib, tempfile
        >>> req = pathlib.Path(tempfile.mkdtemp(), "requirements.txt")
        >>> _ = req.write_text("six")
        >>> env.set_python_requirements(str(req)).get_configuration().get_string("python.requirements", "") == str(req)
        True
        """
        path = self._existing_path(requirements_file_path, "set_python_requirements")
        if requirements_cache_dir is not None:
            path += "#" + self._existing_path(requirements_cache_dir, "set_python_requirements")
        self._config.set(PythonOptions.PYTHON_REQUIREMENTS, path)
        return self

    def add_python_archive(self, archive_path: str, target_dir: str | None = None) -> StreamExecutionEnvironment:
        """An archive (.zip, .whl, .egg, .jar, .tar, .tar.gz, .tgz) every TaskManager that runs a task of the job
        extracts into the job's working directory under ``target_dir`` (default: the archive's file name), as
        PyFlink's; that working directory is on the tasks' ``sys.path``, so its files are found with
        ``importlib.resources.files(target_dir)`` (tasks of several jobs share a process: its current directory
        stays as it is) (``python.archives``)."""
        entry = self._existing_path(archive_path, "add_python_archive")
        if target_dir is not None:
            entry += "#" + target_dir
        self._append(PythonOptions.PYTHON_ARCHIVES, entry)
        return self

    def add_python_file(self, file_path: str) -> StreamExecutionEnvironment:
        """Make ``file_path`` (a module, a package directory, a directory of them, or a .zip / .whl / .egg)
        importable by the job's functions, as PyFlink's: it goes on the client's ``sys.path`` and is shipped with the
        job to every TaskManager that runs one of its tasks, wherever it runs (``python.files``)."""
        make_importable(file_path, "add_python_file")
        self._append(PythonOptions.PYTHON_FILES, self._existing_path(file_path, "add_python_file"))
        return self

    def _append(self, option: ConfigOption[str], entry: str) -> None:
        entries = [e for e in self._config.get(option).split(",") if e.strip()]
        if entry not in entries:
            self._config.set(option, ",".join([*entries, entry]))

    @staticmethod
    def _existing_path(path: str, what: str) -> str:
        full = os.path.abspath(os.path.expanduser(path))
        if not os.path.exists(full):
            raise InvalidProgramError(
                f"{what} expects an existing file or directory; got '{path}'; hint: a path relative to "
                f"{os.getcwd()} or an absolute one"
            )
        return full

    def add_source(
        self, source_func: Source[Any], source_name: str = "Custom Source", type_info: TypeInformation | None = None
    ) -> DataStream[Any]:
        """PyFlink's ``add_source``: here a strom :class:`~strom.api.source.Source` (PyFlink's ``SourceFunction``
        wraps a Java source, which strom cannot run); the same as ``from_source`` without watermarks."""
        if not isinstance(source_func, Source):
            raise InvalidProgramError(
                f"add_source expects a strom Source; got a {type(source_func).__name__}; hint: PyFlink's "
                "SourceFunction wraps a Java source function — use a FLIP-27 source with from_source(...) "
                "(FileSource, NumberSequenceSource, DataGeneratorSource or your own strom.Source)"
            )
        return self.from_source(source_func, None, source_name, type_info)

    def set_runtime_mode(self, execution_mode: RuntimeExecutionMode | str) -> StreamExecutionEnvironment:
        """``STREAMING`` (the default), ``BATCH`` or ``AUTOMATIC`` (``execution.runtime-mode``); see
        :mod:`strom.api.execution_mode` for what BATCH changes."""
        try:
            mode = RuntimeExecutionMode.of(execution_mode)
        except ValueError as exc:
            raise InvalidProgramError(str(exc)) from None
        self._config.set(ExecutionOptions.RUNTIME_MODE, mode.value)
        return self

    def get_runtime_mode(self) -> RuntimeExecutionMode:
        """STREAMING, BATCH or AUTOMATIC (Flink's ``execution.runtime-mode``, set by :meth:`set_runtime_mode`).

        >>> env.get_runtime_mode().name
        'STREAMING'
        """
        try:
            return RuntimeExecutionMode.of(self._config.get(ExecutionOptions.RUNTIME_MODE))
        except ValueError as exc:
            raise InvalidProgramError(str(exc)) from None

    def _batch_execution(self) -> bool:
        """Whether the job runs in BATCH execution: ``BATCH``, or ``AUTOMATIC`` with only bounded sources (as Flink
        picks); checks that every source is bounded then."""
        mode = self.get_runtime_mode()
        if mode is RuntimeExecutionMode.AUTOMATIC:
            return all(
                op.source.get_boundedness() == Boundedness.BOUNDED
                for op in (operator_of(t) for t in self._transformations)
                if isinstance(op, SourceOperator)
            )
        if mode is not RuntimeExecutionMode.BATCH:
            return False
        for t in self._transformations:
            op = operator_of(t)
            if isinstance(op, SourceOperator) and op.source.get_boundedness() != Boundedness.BOUNDED:
                raise InvalidProgramError(
                    f"expected only bounded sources in BATCH execution mode; got the unbounded source '{t.name}'; "
                    "hint: run the job in STREAMING mode, or make the source bounded (e.g. a FileSource without "
                    "monitor_continuously)"
                )
        return True

    def _apply_batch_execution(self) -> None:
        """BATCH results on the pipelined runtime: keyed aggregations emit only their final values, watermark
        strategies emit no watermark before the end of input."""
        for t in self._transformations:
            op = operator_of(t)
            if isinstance(op, StreamGroupedReduce):
                op.batch_results = True
            elif isinstance(op, TimestampsAndWatermarksOperator):
                op.strategy = _for_batch(op.strategy)
            elif isinstance(op, SourceOperator) and op.watermark_strategy is not None:
                op.watermark_strategy = _for_batch(op.watermark_strategy)

    def get_stream_graph(self, job_name: str | None = None, *, clear: bool = False) -> StreamGraph:
        """The program as Flink's ``StreamGraph`` (one node per operator, edges with their partitioners), without
        running it; ``clear``: forget the operators built so far, as ``execute()`` does.

        >>> _ = env.from_collection([1, 2]).map(str).name("to text").print()
        >>> sorted(node.name for node in env.get_stream_graph().nodes.values())
        ['Print to Std. Out', 'Source: Collection Source', 'to text']
        """
        c = self._config
        batch = self._batch_execution()
        if batch:
            self._apply_batch_execution()
        graph = StreamGraphGenerator(
            list(self._transformations),
            job_name=job_name or c.get(PipelineOptions.NAME),
            default_parallelism=self.get_parallelism(),
            max_parallelism=c.get(CoreOptions.MAX_PARALLELISM),
            chaining_enabled=c.get(PipelineOptions.OPERATOR_CHAINING),
        ).generate()
        graph.batch_execution = batch
        if batch and c.get(BatchExecutionOptions.LOCAL_AGGREGATION_ENABLED):
            insert_local_aggregation(graph, max_keys=c.get(BatchExecutionOptions.LOCAL_AGGREGATION_MAX_KEYS))
        if clear:
            self._transformations.clear()
        return graph

    def get_execution_plan(self) -> str:
        """The program's plan as JSON, in the shape of Flink's ``getExecutionPlan()``."""
        return self.get_stream_graph().get_execution_plan()

    def get_job_graph(self, job_name: str | None = None, *, clear: bool = False) -> JobGraph:
        """The program as Flink's ``JobGraph``: the stream graph with chained operators merged into job vertices and the
        runtime settings, as it is submitted.

        >>> _ = env.set_parallelism(1).from_collection([1, 2]).map(str).print()
        >>> len(env.get_job_graph().vertices)
        1
        """
        graph = self.get_stream_graph(job_name, clear=clear)
        c = self._config
        if graph.batch_execution and c.get(NetworkOptions.BATCH_SHUFFLE_COMPRESSION):
            check_codec(c.get(NetworkOptions.COMPRESSION_CODEC))
        runtime_config: dict[str, object] = {
            "buffer_timeout_ms": millis(c.get(ExecutionOptions.BUFFER_TIMEOUT)),
            "batch_size": c.get(ExecutionOptions.BATCH_SIZE),
            "batch_bytes": c.get(ExecutionOptions.BATCH_BYTES),
            "buffers_per_channel": c.get(NetworkOptions.BUFFERS_PER_CHANNEL),
            "floating_buffers_per_gate": c.get(NetworkOptions.FLOATING_BUFFERS_PER_GATE),
            "max_buffers_per_channel": c.get(NetworkOptions.MAX_BUFFERS_PER_CHANNEL),
            "segment_size": c.get(NetworkOptions.SEGMENT_SIZE),
            "state_backend": validate_state_backend(c.get(StateBackendOptions.STATE_BACKEND)),
            "state_backend_options": state_backend_options(c),
            "auto_watermark_interval_ms": millis(c.get(PipelineOptions.AUTO_WATERMARK_INTERVAL)),
            "job_parameters": c.get(PipelineOptions.GLOBAL_JOB_PARAMETERS),
            "yielded_output_tags": output_tags_created(),
            "batch_execution": graph.batch_execution,
            "sort_buffer_bytes": c.get(NetworkOptions.SORT_SHUFFLE_MIN_BUFFERS) * c.get(NetworkOptions.SEGMENT_SIZE),
            "batch_shuffle_compression": c.get(NetworkOptions.BATCH_SHUFFLE_COMPRESSION),
            "compression_codec": c.get(NetworkOptions.COMPRESSION_CODEC),
            "sorted_inputs": c.get(ExecutionOptions.SORTED_INPUTS_ENABLED),
            "sorted_inputs_memory": c.get(ExecutionOptions.SORTED_INPUTS_MEMORY),
            "tmp_dirs": c.get(NetworkOptions.TMP_DIRS),
            "task_cancellation_interval_s": c.get(ExecutionOptions.CANCELLATION_INTERVAL).total_seconds(),
        }
        dependencies = PythonDependencyInfo.from_configuration(c)
        if dependencies is not None:  # shipped to the TaskManagers, installed there before the tasks load
            runtime_config[PYTHON_DEPENDENCIES_KEY] = dependencies
        job_graph = StreamingJobGraphGenerator(graph, job_id=uuid.uuid4().hex, config=runtime_config).create_job_graph()
        job_graph.job_configuration = c.to_dict()
        if graph.batch_execution and c.contains(CheckpointingOptions.CHECKPOINTING_INTERVAL):
            log.info("BATCH execution: checkpointing is not used (Flink's batch jobs do not checkpoint)")
            job_graph.job_configuration.pop(CheckpointingOptions.CHECKPOINTING_INTERVAL.key, None)
        return job_graph

    # -- execution ---------------------------------------------------------------------------------
    def execute(
        self, job_name: str | None = None, *, savepoint_path: str | None = None, allow_non_restored_state: bool = False
    ) -> JobExecutionResult:
        """Run the job to its end on an embedded MiniCluster.

        ``savepoint_path``: start from the state of a savepoint or retained checkpoint (operators matched
        by ``uid``; at any parallelism). ``allow_non_restored_state``: drop state no operator claims."""
        client = self.execute_async(
            job_name, savepoint_path=savepoint_path, allow_non_restored_state=allow_non_restored_state
        )
        if isinstance(client, RemoteJobClient) and not client.attached:  # strom run -d: the job runs on
            return client.detached_result()
        return client.get_job_execution_result()

    def execute_async(
        self, job_name: str | None = None, *, savepoint_path: str | None = None, allow_non_restored_state: bool = False
    ) -> JobClient:
        """Start the job and return at once with a :class:`JobClient`."""
        self._validate_connectors()
        job_graph = self.get_job_graph(job_name, clear=True)
        if savepoint_path is not None:  # for this job only, not for later ones of this environment
            job_graph.job_configuration[CheckpointingOptions.SAVEPOINT_PATH.key] = savepoint_path
        if allow_non_restored_state:
            job_graph.job_configuration[CheckpointingOptions.SAVEPOINT_IGNORE_UNCLAIMED_STATE.key] = True
        return self._submit(job_graph)

    def _validate_connectors(self) -> None:
        """Sources and sinks check their paths and URL schemes here, in the client, before a cluster starts."""
        for t in self._transformations:
            operator = operator_of(t)
            for connector in (getattr(operator, "source", None), getattr(operator, "sink", None)):
                check = getattr(connector, "validate", None)
                if callable(check):
                    check()

    def _submit(self, job_graph: JobGraph) -> JobClient:
        """Run ``job_graph`` with the executor of ``execution.target`` (Flink's ``PipelineExecutorServiceLoader``)."""
        factory = DEFAULT_EXECUTOR_SERVICE_LOADER.get_executor_factory(self._config)
        StreamExecutionEnvironment.submitted_jobs += 1
        return factory.get_executor(self._config).execute(job_graph, self._config, spark=self._spark)

    def _execute_and_collect(self, sink_id: str, job_name: str | None, limit: int | None) -> CloseableIterator:
        loader = DEFAULT_EXECUTOR_SERVICE_LOADER
        target = self._config.get(DeploymentOptions.TARGET)
        if target in loader.get_executor_names() and target not in loader.targets_collecting_results():
            collecting = " or ".join(f"'{name}'" for name in loader.targets_collecting_results())
            raise InvalidProgramError(
                f"expected {DeploymentOptions.TARGET.key} {collecting} for execute_and_collect; got '{target}'; "
                f"hint: a {target} job's output goes to a sink (FileSink, ...); collect runs on an embedded cluster"
            )
        client = self.execute_async(job_name)
        return CloseableIterator(client, sink_id, limit)


def make_importable(file_path: str, what: str) -> None:
    """Put the directory of ``file_path`` (a module, a package directory, or a directory of them) on this process's
    ``sys.path`` and on the ``PYTHONPATH`` the TaskManagers of this machine start with; ``what`` names the caller
    in the error for a path that does not exist."""
    path = os.path.abspath(file_path)
    if not os.path.exists(path):
        raise InvalidProgramError(
            f"{what} expects an existing file or directory; got '{file_path}'; hint: a path relative "
            f"to {os.getcwd()} or an absolute one"
        )
    directory = (
        path if os.path.isdir(path) and not os.path.exists(os.path.join(path, "__init__.py")) else os.path.dirname(path)
    )
    if directory not in sys.path:
        sys.path.append(directory)
    parts = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if directory not in parts:
        os.environ["PYTHONPATH"] = os.pathsep.join([*parts, directory])
