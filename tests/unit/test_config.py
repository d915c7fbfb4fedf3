from __future__ import annotations

import logging
import re
from datetime import timedelta
from pathlib import Path

import pytest

from strom import StreamExecutionEnvironment
from strom.cli import main as strom_main
from strom.config import (
    REGISTRY,
    CheckpointingOptions,
    ClusterOptions,
    Configuration,
    ExecutionOptions,
    HeartbeatOptions,
    NetworkOptions,
    PipelineOptions,
    TaskManagerOptions,
    render_reference,
)
from strom.deploy.minicluster import MiniCluster
from strom.exceptions import ConfigurationError, InvalidProgramError
from strom.runtime.scheduler.restart_strategy import (
    FailureRateRestartBackoffTimeStrategy,
    restart_strategy_from_configuration,
)


def test_values_are_parsed_to_the_option_type() -> None:
    conf = Configuration({"taskmanager.numberOfTaskSlots": "3", "pipeline.operator-chaining.enabled": "false"})
    assert conf.get(TaskManagerOptions.NUM_TASK_SLOTS) == 3
    assert conf.to_dict()["pipeline.operator-chaining.enabled"] is False


def test_unknown_key_suggests_the_known_one() -> None:
    with pytest.raises(ConfigurationError, match=r"known configuration key.*numberOfTaskSlots.*did you mean"):
        Configuration({"taskmanager.numberOfTaskSlots ".strip().replace("taskmanager", "tm"): 2})


def test_wrong_type_is_a_clear_error() -> None:
    with pytest.raises(ConfigurationError, match=r"expects a int; got 'many'"):
        Configuration().set_string("taskmanager.numberOfTaskSlots", "many")


def test_configuration_reference_is_up_to_date() -> None:
    doc = Path(__file__).parents[2] / "docs" / "configuration.md"
    assert doc.read_text() == render_reference(), "run: make docs/configuration.md"
    assert all(f"`{key}`" in doc.read_text() for key in REGISTRY)


# --- Flink's units and value notation (durations, memory sizes) ------------------------------------------------


def test_a_flink_heartbeat_timeout_means_what_it_means_in_flink() -> None:
    """Flink's ``heartbeat.timeout: 50000`` is 50 seconds here too, not 14 hours."""
    conf = Configuration({"heartbeat.timeout": 50000, "heartbeat.interval": "10000", "slot.request.timeout": 300000})
    assert conf.get(HeartbeatOptions.TIMEOUT) == timedelta(seconds=50)
    assert conf.get(HeartbeatOptions.INTERVAL) == timedelta(seconds=10)
    assert conf.get(ClusterOptions.SLOT_REQUEST_TIMEOUT) == timedelta(minutes=5)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("10 s", timedelta(seconds=10)),
        ("10s", timedelta(seconds=10)),
        (" 10 SECONDS ", timedelta(seconds=10)),
        ("10 sec", timedelta(seconds=10)),
        ("500 ms", timedelta(milliseconds=500)),
        ("500millis", timedelta(milliseconds=500)),
        ("500", timedelta(milliseconds=500)),
        ("1 min", timedelta(minutes=1)),
        ("1m", timedelta(minutes=1)),
        ("2 minutes", timedelta(minutes=2)),
        ("1 h", timedelta(hours=1)),
        ("1 d", timedelta(days=1)),
        ("1500 us", timedelta(microseconds=1500)),
        ("1500 µs", timedelta(microseconds=1500)),
        ("3000 ns", timedelta(microseconds=3)),
    ],
)
def test_duration_options_take_flinks_duration_strings(text: str, expected: timedelta) -> None:
    conf = Configuration({"execution.checkpointing.timeout": text})
    assert conf.get(CheckpointingOptions.CHECKPOINTING_TIMEOUT) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("64 mb", 64 << 20),
        ("64MB", 64 << 20),
        ("32 kb", 32 << 10),
        ("32k", 32 << 10),
        ("1 GB", 1 << 30),
        ("2 tebibytes", 2 << 40),
        ("4096", 4096),
        ("100 bytes", 100),
        (4096, 4096),
    ],
)
def test_memory_size_options_take_flinks_memory_strings(value: object, expected: int) -> None:
    conf = Configuration({"taskmanager.memory.segment-size": value, "taskmanager.network.max-frame-size": value})
    assert conf.get(NetworkOptions.SEGMENT_SIZE) == expected
    assert conf.get(NetworkOptions.MAX_FRAME_BYTES) == expected


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        (
            "heartbeat.timeout",
            "ten seconds",
            r"expects a duration \(a whole number of milliseconds or a string such as",
        ),
        ("execution.checkpointing.interval", "10 parsecs", r"expects a duration .*got '10 parsecs'; hint: 'parsecs'"),
        ("execution.checkpointing.interval", True, r"expects a duration .*got True; hint:"),
        ("execution.checkpointing.interval", 2.5, r"expects a duration .*got 2\.5; hint: .* 2\.5 ms is '2500 us'"),
        ("taskmanager.memory.segment-size", "32 kib", r"expects a memory size .*'64 mb'.*got '32 kib'; hint: 'kib'"),
        ("taskmanager.memory.segment-size", "-1 kb", r"expects a memory size .*got '-1 kb'"),
    ],
)
def test_a_value_of_the_wrong_shape_names_the_key_the_form_and_an_example(
    key: str, value: object, expected: str
) -> None:
    with pytest.raises(ConfigurationError, match=rf"^option '{re.escape(key)}' {expected}"):
        Configuration({key: value})


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("heartbeat.timeout", 1.0, r"got 1\.0; hint: strom took seconds here .* 1 s is 1000 or '1000 ms'"),
        ("heartbeat.interval", "0.25", r"got '0\.25'; hint: strom took seconds .* 0\.25 s is 250 or '250 ms'"),
        ("slot.request.timeout", 60, r"got 60, which is 60 ms; hint: .*write '60 s' for seconds, or '60 ms'"),
        ("task.cancellation.timeout", "30", r"got '30', which is 30 ms; hint: .*'30 s'"),
        ("taskmanager.registration.timeout", 30.0, r"got 30\.0; hint: strom took seconds"),
    ],
)
def test_a_value_in_the_old_seconds_form_is_refused_not_read_as_milliseconds(
    key: str, value: object, expected: str
) -> None:
    with pytest.raises(ConfigurationError, match=rf"^option '{re.escape(key)}' expects a duration .*{expected}"):
        Configuration({key: value})
    assert Configuration({key: "30 s"}).to_dict() == {key: timedelta(seconds=30)}  # a unit says what is meant
    assert Configuration({key: 30_000}).to_dict() == {key: timedelta(seconds=30)}  # and so does Flink's number


def test_get_returns_timedelta_for_durations_and_int_bytes_for_memory_sizes_by_default() -> None:
    conf = Configuration()
    assert conf.get(HeartbeatOptions.TIMEOUT) == timedelta(seconds=10)
    assert conf.get(ExecutionOptions.BUFFER_TIMEOUT) == timedelta(milliseconds=100)
    assert conf.get(PipelineOptions.AUTO_WATERMARK_INTERVAL) == timedelta(milliseconds=200)
    assert conf.get(NetworkOptions.SEGMENT_SIZE) == 32 * 1024
    assert conf.set(HeartbeatOptions.TIMEOUT, timedelta(seconds=3)).get(HeartbeatOptions.TIMEOUT).total_seconds() == 3


def test_flinks_deprecated_buffer_timeout_key_is_read_as_the_current_one() -> None:
    conf = Configuration({"execution.buffer-timeout": "5 ms"})
    assert conf.get(ExecutionOptions.BUFFER_TIMEOUT) == timedelta(milliseconds=5)
    assert conf.to_dict() == {"execution.buffer-timeout.interval": timedelta(milliseconds=5)}


def test_flink_1_checkpoint_keys_are_read_with_flinks_deprecation_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="strom"):
        conf = Configuration({"state.checkpoints.dir": "/tmp/checkpoints", "state.checkpoints.num-retained": "3"})
    assert conf.get(CheckpointingOptions.CHECKPOINTS_DIRECTORY) == "/tmp/checkpoints"
    assert conf.get(CheckpointingOptions.MAX_RETAINED_CHECKPOINTS) == 3
    assert (
        "Config uses deprecated configuration key 'state.checkpoints.dir' instead of proper key "
        "'execution.checkpointing.dir'" in caplog.text
    )


def test_restart_strategy_delays_take_durations() -> None:
    conf = Configuration(
        {
            "restart-strategy.type": "failure-rate",
            "restart-strategy.failure-rate.delay": "2 s",
            "restart-strategy.failure-rate.failure-rate-interval": "5 min",
        }
    )
    s = restart_strategy_from_configuration(conf, checkpointing_enabled=False)
    assert isinstance(s, FailureRateRestartBackoffTimeStrategy)
    assert (s.backoff_ms, s.interval_ms) == (2000, 300_000)


def test_a_heartbeat_timeout_shorter_than_the_interval_is_refused_before_the_cluster_starts() -> None:
    conf = Configuration({"heartbeat.interval": "2 s", "heartbeat.timeout": "1 s"})
    with pytest.raises(
        ConfigurationError, match=r"^expected heartbeat\.timeout >= heartbeat\.interval \(2 s\); got 1 s"
    ):
        MiniCluster(conf, num_task_managers=1)
    with pytest.raises(ConfigurationError, match=r"^expected heartbeat\.interval > 0; got 0 ms"):
        MiniCluster(Configuration({"heartbeat.interval": 0}), num_task_managers=1)
    with pytest.raises(ConfigurationError, match=r"^expected slot\.request\.timeout > 0; got -5 ms"):
        MiniCluster(Configuration({"slot.request.timeout": -5}), num_task_managers=1)


def test_the_environment_takes_durations_in_its_configuration_and_setters() -> None:
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration({"execution.checkpointing.interval": "10 s", "execution.checkpointing.timeout": "1 min"})
    )
    cfg = env.get_checkpoint_config()
    assert (cfg.get_checkpoint_interval(), cfg.get_checkpoint_timeout()) == (10_000, 60_000)
    env.enable_checkpointing(timedelta(seconds=2))
    assert cfg.get_checkpoint_interval() == 2000
    env.enable_checkpointing("500 ms")
    cfg.set_checkpoint_timeout("2 min")
    cfg.set_min_pause_between_checkpoints(timedelta(milliseconds=250))
    env.set_buffer_timeout("5 ms")
    assert (cfg.get_checkpoint_interval(), cfg.get_checkpoint_timeout(), env.get_buffer_timeout()) == (500, 120_000, 5)
    with pytest.raises(InvalidProgramError, match=r"checkpoint interval of at least 10 ms; got '5 ms'"):
        env.enable_checkpointing("5 ms")
    with pytest.raises(InvalidProgramError, match=r"expects a duration .*got 'soon'"):
        cfg.set_checkpoint_timeout("soon")
    env.from_sequence(1, 3).print()
    job_graph = env.get_job_graph()
    assert job_graph.vertices  # compiled with the runtime's millisecond values
    restored = Configuration(dict(job_graph.job_configuration))  # what the JobMaster reads
    assert restored.get(CheckpointingOptions.MIN_PAUSE_BETWEEN_CHECKPOINTS) == timedelta(milliseconds=250)


def test_strom_run_d_takes_duration_and_memory_strings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "job.py"
    out = tmp_path / "conf.txt"
    script.write_text(
        "import sys\n"
        "from strom import StreamExecutionEnvironment\n"
        "from strom.config import HeartbeatOptions, NetworkOptions\n"
        "c = StreamExecutionEnvironment.get_execution_environment().get_configuration()\n"
        "with open(sys.argv[1], 'w') as f:\n"
        "    f.write(repr((c.get(HeartbeatOptions.TIMEOUT).total_seconds(), c.get(NetworkOptions.SEGMENT_SIZE))))\n"
    )
    try:
        defines = ["-D", "heartbeat.timeout=50 s", "-D", "taskmanager.memory.segment-size=64 kb"]
        assert strom_main(["run", *defines, str(script), str(out)]) == 1  # it ran; it submitted no job
    finally:
        StreamExecutionEnvironment.set_context_configuration(None)
    assert out.read_text() == repr((50.0, 64 * 1024))
    assert strom_main(["run", "-D", "heartbeat.timeout=ten seconds", str(script), str(out)]) == 2
    assert "option 'heartbeat.timeout' expects a duration" in capsys.readouterr().err


def test_the_reference_shows_each_options_type_unit_and_flink_style_default() -> None:
    reference = render_reference()
    assert "| `heartbeat.timeout` | Duration (ms) | `10 s` |" in reference
    assert "| `taskmanager.memory.segment-size` | MemorySize (bytes) | `32 kb` |" in reference
    assert "| `execution.checkpointing.timeout` | Duration (ms) | `10 min` |" in reference
    assert "| `taskmanager.python.switch-interval` | float (ms) | `1.0` |" in reference
