"""PyFlink's habits: Time and Duration wherever durations go, StateTtlConfig's builder with its nested enums,
Configuration's typed getters and setters, the environment calls of a JVM (accepted), state backends, runtime
modes and typed state descriptors."""

from __future__ import annotations

import logging
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from strom import Configuration, InvalidProgramError
from strom.common import Duration, Time, Types, WatermarkStrategy
from strom.datastream import (
    EmbeddedRocksDBStateBackend,
    HashMapStateBackend,
    RuntimeExecutionMode,
    StreamExecutionEnvironment,
)
from strom.datastream.state import ListStateDescriptor, MapStateDescriptor, StateTtlConfig, ValueStateDescriptor
from strom.datastream.window import SlidingEventTimeWindows, TumblingEventTimeWindows
from strom.exceptions import ConfigurationError


def test_time_and_duration_are_timedeltas_accepted_wherever_a_duration_is() -> None:
    assert Time.seconds(5) == timedelta(seconds=5) and Time.milliseconds(5).to_milliseconds() == 5
    assert Time.minutes(2).to_milliseconds() == 120_000 and Time.hours(1) == timedelta(hours=1)
    assert Time.days(1).days == 1 and Time.seconds(61).seconds == 61  # timedelta's fields stay
    assert Duration.of_millis(1500).to_milliseconds() == 1500 and Duration.of_nanos(2_000_000).to_milliseconds() == 2
    assert Duration.of_seconds(2) + Duration.of_minutes(1) == timedelta(seconds=62)
    assert TumblingEventTimeWindows.of(Time.milliseconds(5)).size == 5
    assert SlidingEventTimeWindows.of(Time.seconds(4), Time.seconds(2)).slide == 2000
    WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(2)).with_idleness(Time.seconds(1))
    env = StreamExecutionEnvironment.get_execution_environment()
    env.enable_checkpointing(Time.seconds(3))
    assert env.get_checkpoint_config().get_checkpoint_interval() == 3000
    with pytest.raises(TypeError, match="expected an int number of seconds"):
        Time.seconds(1.5)  # type: ignore[arg-type]


def test_state_ttl_config_has_pyflinks_builder_and_nested_names() -> None:
    config = (
        StateTtlConfig.new_builder(Time.seconds(1))
        .set_update_type(StateTtlConfig.UpdateType.OnReadAndWrite)
        .set_state_visibility(StateTtlConfig.StateVisibility.ReturnExpiredIfNotCleanedUp)
        .disable_cleanup_in_background()
        .cleanup_incrementally(10, False)
        .build()
    )
    assert config.ttl_ms == 1000 and config.get_ttl() == timedelta(seconds=1)
    assert config.get_update_type() is StateTtlConfig.UpdateType.OnReadAndWrite
    assert config.get_state_visibility() is StateTtlConfig.StateVisibility.ReturnExpiredIfNotCleanedUp
    descriptor = ValueStateDescriptor("s", Types.FLOAT())
    descriptor.enable_time_to_live(config)
    assert descriptor.get_ttl_config() is config and descriptor.get_type_info() == Types.FLOAT()
    disabled = StateTtlConfig.new_builder(1000).set_update_type(StateTtlConfig.UpdateType.Disabled).build()
    descriptor.enable_time_to_live(disabled)
    assert descriptor.get_ttl_config() is None


def test_state_descriptors_take_types_as_pyflink_and_defaults_as_strom() -> None:
    assert ValueStateDescriptor("v", Types.LONG()).default_value is None
    assert ValueStateDescriptor("v", default_value=0).default_value == 0
    assert ListStateDescriptor("l", Types.STRING()).get_type_info() == Types.STRING()
    m = MapStateDescriptor("m", Types.STRING(), Types.INT())
    assert (m.key_type_info, m.value_type_info) == (Types.STRING(), Types.INT())
    with pytest.raises(TypeError, match="takes a default value or a TypeInformation; got the class int"):
        ValueStateDescriptor("v", int)
    with pytest.raises(TypeError, match="as a TypeInformation"):
        ListStateDescriptor("l", "STRING")


def test_configuration_has_pyflinks_typed_getters_and_setters() -> None:
    c = Configuration()
    c.set_integer("parallelism.default", 3).set_boolean("pipeline.operator-chaining.enabled", False)
    c.set_string("execution.checkpointing.interval", "10 s").set_float("python.fn-execution.memory.fraction", 0.5)
    assert c.get_integer("parallelism.default", 1) == 3 and c.get_integer("no.such", 7) == 7
    assert c.get_boolean("pipeline.operator-chaining.enabled", True) is False
    assert c.get_string("execution.checkpointing.interval", "") == "10 s"
    assert c.get_float("python.fn-execution.memory.fraction", 0.0) == 0.5  # a JVM-side key: kept, not used
    assert c.contains_key("parallelism.default") and not c.contains_key("state.backend.type")
    assert {"parallelism.default", "execution.checkpointing.interval"} <= c.key_set()
    other = Configuration().add_all(c)
    assert other.get_integer("parallelism.default", 1) == 3
    assert other.remove_config("parallelism.default") and not other.contains_key("parallelism.default")
    with pytest.raises(ConfigurationError, match=r"expected a known configuration key; got 'paralelism\.default'"):
        c.set_integer("paralelism.default", 2)


def test_jvm_calls_are_accepted_python_dependencies_are_kept_and_python_files_become_importable(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setenv("PYTHONPATH", "")
    env = StreamExecutionEnvironment.get_execution_environment()
    with caplog.at_level(logging.INFO, logger="strom"):  # strom's INFO notes show at logging.level INFO
        env.add_jars("file:///x.jar").add_classpaths("file:///y").set_python_executable("python3")
    assert sum("ignored" in r.getMessage() for r in caplog.records) == 3
    # the job's Python dependencies are shipped to the TaskManagers (issue 31): the paths must exist
    for call in (env.set_python_requirements, env.add_python_archive):
        with pytest.raises(InvalidProgramError, match=r"expects an existing file or directory; got 'missing\.txt'"):
            call("missing.txt")
    (tmp_path / "requirements.txt").write_text("six\n")
    (tmp_path / "venv.zip").write_bytes(b"")
    env.set_python_requirements(str(tmp_path / "requirements.txt"), str(tmp_path))
    env.add_python_archive(str(tmp_path / "venv.zip"), "venv")
    conf = env.get_configuration()
    assert conf.get_string("python.requirements", "") == f"{tmp_path / 'requirements.txt'}#{tmp_path}"
    assert conf.get_string("python.archives", "") == f"{tmp_path / 'venv.zip'}#venv"
    module = tmp_path / "helper_mod_for_strom.py"
    module.write_text("VALUE = 42\n")
    env.add_python_file(str(module))
    assert str(tmp_path) in sys.path and str(tmp_path) in __import__("os").environ["PYTHONPATH"]
    assert __import__("helper_mod_for_strom").VALUE == 42
    assert env.get_configuration().get_string("python.files", "") == str(module)
    with pytest.raises(InvalidProgramError, match="expects an existing file or directory"):
        env.add_python_file(str(tmp_path / "missing.py"))


def test_state_backends_and_runtime_modes() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_state_backend(HashMapStateBackend())
    assert env.get_configuration().get_string("state.backend.type", "") == "hashmap"
    env.set_state_backend(EmbeddedRocksDBStateBackend())  # built now (issue 28): no longer refused
    assert env.get_configuration().get_string("state.backend.type", "") == "rocksdb"
    assert env.get_runtime_mode() is RuntimeExecutionMode.STREAMING
    assert env.set_runtime_mode(RuntimeExecutionMode.BATCH).get_runtime_mode() is RuntimeExecutionMode.BATCH
    configured = StreamExecutionEnvironment.get_execution_environment(
        Configuration({"execution.runtime-mode": "automatic"})
    )
    assert configured.get_runtime_mode() is RuntimeExecutionMode.AUTOMATIC
    with pytest.raises(InvalidProgramError, match="expected a runtime mode STREAMING, BATCH or AUTOMATIC"):
        env.set_runtime_mode("MICRO_BATCH")


def test_a_pyflink_style_window_assigner_gets_the_environment_and_its_serializer_works() -> None:
    from io import BytesIO
    from typing import Any

    from strom.common.serializer import TypeSerializer
    from strom.datastream import StreamExecutionEnvironment, WindowAssigner
    from strom.datastream.window import (
        EventTimeTrigger,
        GlobalWindows,
        TimeWindow,
        TimeWindowSerializer,
        Trigger,
    )

    seen: list[Any] = []

    class Tumbling(WindowAssigner[tuple, TimeWindow]):  # PyFlink's documented form, annotations included
        def assign_windows(
            self, element: tuple, timestamp: int, context: WindowAssigner.WindowAssignerContext
        ) -> list[TimeWindow]:
            start = TimeWindow.get_window_start_with_offset(timestamp, 0, 10)
            return [TimeWindow(start, start + 10)]

        def get_default_trigger(self, env: Any) -> Trigger[tuple, TimeWindow]:
            seen.append(env)
            return EventTimeTrigger()

        def get_window_serializer(self) -> TypeSerializer[TimeWindow]:
            return TimeWindowSerializer()

        def is_event_time(self) -> bool:
            return True

    env = StreamExecutionEnvironment.get_execution_environment()
    env.from_collection([(1, "a")]).key_by(lambda t: t[1]).window(Tumbling())
    assert seen == [env]
    buf = BytesIO()
    Tumbling().get_window_serializer().serialize(TimeWindow(-10, 0), buf)
    assert TimeWindowSerializer().deserialize(BytesIO(buf.getvalue())) == TimeWindow(-10, 0)
    assert TimeWindowSerializer() == TimeWindowSerializer() and len(buf.getvalue()) == 16
    assert type(GlobalWindows.create().get_window_serializer()).__name__ == "GlobalWindowSerializer"


def test_instant_as_pyflink_has_it() -> None:
    from strom.common import Instant

    assert Instant.of_epoch_milli(1_700_000_000_123) == Instant(1_700_000_000, 123_000_000)
    assert Instant.of_epoch_milli(-1) == Instant(-1, 999_000_000)  # floored, as Java's Instant.ofEpochMilli
    assert Instant(-1, 999_000_000).to_epoch_milli() == -1
    assert repr(Instant(3, 5)) == "Instant<3, 5>"
    assert sorted([Instant(2, 0), Instant(1, 7)]) == [Instant(1, 7), Instant(2, 0)]


def test_get_config_is_pyflinks_execution_config_over_flinks_keys() -> None:
    from strom.common import ExecutionConfig

    env = StreamExecutionEnvironment.get_execution_environment()
    config = env.get_config()
    assert isinstance(config, ExecutionConfig)
    assert config.get_parallelism() == ExecutionConfig.PARALLELISM_DEFAULT
    config.set_auto_watermark_interval(50).set_parallelism(3).set_max_parallelism(64).set_task_cancellation_timeout(0)
    config.set_global_job_parameters({"region": "eu", "limit": 5})  # type: ignore[dict-item]
    set_here = env.get_configuration().to_dict()
    set_here.pop("minicluster.taskmanager-mode", None)  # the test tier's context configuration
    assert set_here == {
        "pipeline.auto-watermark-interval": timedelta(milliseconds=50),
        "parallelism.default": 3,
        "pipeline.max-parallelism": 64,
        "task.cancellation.timeout": timedelta(0),
        "pipeline.global-job-parameters": {"region": "eu", "limit": "5"},
    }
    assert (config.get_auto_watermark_interval(), config.get_parallelism(), config.get_max_parallelism()) == (50, 3, 64)
    assert env.get_configuration().get_string("pipeline.global-job-parameters", "") == "region:eu,limit:5"
    config.set_parallelism(ExecutionConfig.PARALLELISM_DEFAULT)
    assert config.get_parallelism() == -1 and env.get_parallelism() >= 1
    assert config.enable_object_reuse().is_object_reuse_enabled()
    assert config.disable_generic_types().has_generic_types_disabled()
    config.add_default_kryo_serializer("a.B", "a.BSerializer").register_pojo_type("a.B")


def test_global_job_parameters_reach_every_function() -> None:
    from strom.datastream import MapFunction, RuntimeContext

    class Tag(MapFunction):
        def open(self, runtime_context: RuntimeContext) -> None:
            self.region = runtime_context.get_job_parameter("region", "?")
            self.other = runtime_context.get_job_parameter("missing", "default")

        def map(self, value: int) -> tuple[int, str, str]:
            return value, self.region, self.other

    env = StreamExecutionEnvironment.get_execution_environment(Configuration({"parallelism.default": 2}))
    env.get_config().set_global_job_parameters({"region": "eu"})
    with env.from_collection([1, 2]).map(Tag()).execute_and_collect() as results:
        assert sorted(results) == [(1, "eu", "default"), (2, "eu", "default")]


def test_a_map_option_takes_flinks_string_form() -> None:
    conf = Configuration({"pipeline.global-job-parameters": "a:1, b:x"})
    assert conf.to_dict() == {"pipeline.global-job-parameters": {"a": "1", "b": "x"}}
    with pytest.raises(ConfigurationError, match="key1:value1,key2:value2"):
        Configuration({"pipeline.global-job-parameters": "no colon"})


def test_checkpoint_config_getters_read_what_the_setters_wrote() -> None:
    from strom.datastream import CheckpointingMode, ExternalizedCheckpointRetention

    env = StreamExecutionEnvironment.get_execution_environment()
    env.enable_checkpointing(1000, CheckpointingMode.AT_LEAST_ONCE)
    cfg = env.get_checkpoint_config()
    cfg.set_min_pause_between_checkpoints("2 s")
    cfg.set_max_concurrent_checkpoints(2)
    cfg.set_tolerable_checkpoint_failure_number(3)
    assert (cfg.get_min_pause_between_checkpoints(), cfg.get_max_concurrent_checkpoints()) == (2000, 2)
    assert cfg.get_tolerable_checkpoint_failure_number() == 3 and not cfg.is_fail_on_checkpointing_errors()
    cfg.set_fail_on_checkpointing_errors(True)
    assert cfg.get_tolerable_checkpoint_failure_number() == 0
    cfg.set_fail_on_checkpointing_errors(False)
    assert cfg.get_tolerable_checkpoint_failure_number() == 2**31 - 1
    cfg.set_externalized_checkpoint_retention(ExternalizedCheckpointRetention.NO_EXTERNALIZED_CHECKPOINTS)
    assert not cfg.is_externalized_checkpoints_enabled()
    cfg.set_externalized_checkpoint_retention(ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION)
    assert cfg.get_externalized_checkpoint_retention() is ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION
    assert cfg.is_externalized_checkpoints_enabled()
    cfg.enable_unaligned_checkpoints()
    cfg.disable_unaligned_checkpoints()
    assert not cfg.is_unaligned_checkpoints_enabled()


def test_get_state_backend_says_which_backend_was_chosen() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    assert env.get_state_backend() == HashMapStateBackend()
    env.set_state_backend(EmbeddedRocksDBStateBackend())
    assert env.get_state_backend() == EmbeddedRocksDBStateBackend()
    rocksdb = StreamExecutionEnvironment.get_execution_environment(Configuration({"state.backend.type": "rocksdb"}))
    assert rocksdb.get_state_backend() == EmbeddedRocksDBStateBackend()


def test_the_aligned_checkpoint_timeout_is_flinks_key_and_pyflinks_duration() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    cfg = env.get_checkpoint_config()
    assert cfg.get_aligned_checkpoint_timeout() == Duration.of_millis(0)  # Flink's default: unaligned from the start
    cfg.set_aligned_checkpoint_timeout(Duration.of_millis(250))
    assert cfg.get_aligned_checkpoint_timeout() == Duration.of_millis(250)
    assert isinstance(cfg.get_aligned_checkpoint_timeout(), Duration)
    cfg.set_alignment_timeout("2 s")  # Flink's deprecated name
    assert cfg.get_alignment_timeout() == Duration.of_seconds(2)
    with pytest.raises(InvalidProgramError, match="aligned checkpoint timeout"):
        cfg.set_aligned_checkpoint_timeout(-1)
    configured = StreamExecutionEnvironment.get_execution_environment(
        Configuration({"execution.checkpointing.aligned-checkpoint-timeout": "30 s"})
    )
    assert configured.get_checkpoint_config().get_aligned_checkpoint_timeout() == Duration.of_seconds(30)
