"""A TaskManager's settings are mapped from the configuration once and reach a TaskManager process unchanged:
configuration → :class:`TaskManagerConfiguration` → the MiniCluster's command line → what the TaskManager parses."""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import timedelta

import pytest

from strom.config import Configuration
from strom.deploy.minicluster import task_manager_command
from strom.exceptions import ConfigurationError
from strom.runtime.metrics.prometheus import PrometheusSettings
from strom.runtime.taskexecutor.__main__ import parse_arguments
from strom.runtime.taskexecutor.runner import TaskManagerSpec
from strom.runtime.taskexecutor.task_manager_configuration import TaskManagerConfiguration

EVERY_OPTION = {
    "taskmanager.host": "auto",
    "taskmanager.numberOfTaskSlots": 3,
    "heartbeat.interval": "1500 ms",
    "heartbeat.timeout": "7 s",
    "task.cancellation.timeout": "0 ms",
    "taskmanager.network.max-frame-size": "3 mb",
    "taskmanager.python.switch-interval": 0.25,
    "logging.level": "info",
    "env.log.dir": "/var/log/strom with space=and equals",
    "env.log.max": 4,
    "metrics.reporter.prom.factory.class": "prometheus",
    "metrics.reporter.prom.port": "9250-9260",
    "metrics.reporter.prom.host": "0.0.0.0",
    "process.working-dir": "/var/strom/work",
    "taskmanager.resource-id": "tm-a",
    "taskmanager.state.local.root-dirs": "/var/strom/local-state",
}


def _through_the_command_line(settings: TaskManagerConfiguration) -> TaskManagerConfiguration:
    command = task_manager_command(settings, jm_address=("10.0.0.1", 6123), tm_id="tm-7", parent_pid=42)
    assert command[1:3] == ["-m", "strom.runtime.taskexecutor"]
    parsed = parse_arguments(command[3:])
    assert (parsed.jm_address, parsed.tm_id, parsed.parent_pid) == (("10.0.0.1", 6123), "tm-7", 42)
    assert "--tm-id=tm-7" in command  # tests find a TaskManager process by it
    return parsed.configuration


def test_every_option_maps_once_and_survives_the_command_line() -> None:
    settings = TaskManagerConfiguration.from_configuration(Configuration(EVERY_OPTION))
    assert settings == TaskManagerConfiguration(
        host="auto",
        num_slots=3,
        heartbeat_interval=timedelta(milliseconds=1500),
        heartbeat_timeout=timedelta(seconds=7),
        cancellation_timeout=timedelta(0),
        max_frame_bytes=3 * 1024 * 1024,
        switch_interval_ms=0.25,
        log_level=logging.INFO,
        log_dir="/var/log/strom with space=and equals",
        max_log_files=4,
        prometheus=PrometheusSettings(ports="9250-9260", host="0.0.0.0"),
        working_dir="/var/strom/work",
        resource_id="tm-a",
        local_state_root_dirs="/var/strom/local-state",
    )
    assert _through_the_command_line(settings) == settings


def test_the_defaults_survive_the_command_line_and_no_reporter_stays_none() -> None:
    settings = TaskManagerConfiguration.from_configuration(Configuration())
    assert settings.prometheus is None and settings.log_level == logging.WARNING and settings.log_dir == ""
    assert _through_the_command_line(settings) == settings
    assert parse_arguments(["--jm-host=h", "--jm-port=1", "--tm-id=t"]).configuration == settings


@pytest.mark.parametrize(
    "interval",
    [timedelta(microseconds=1), timedelta(milliseconds=1, microseconds=1), timedelta(minutes=2), timedelta(days=1)],
)
def test_durations_keep_every_microsecond(interval: timedelta) -> None:
    settings = replace(TaskManagerConfiguration.from_configuration(Configuration()), heartbeat_interval=interval)
    assert _through_the_command_line(settings) == settings


def test_a_launcher_changes_only_what_belongs_to_its_hosting() -> None:
    """The MiniCluster puts its own log directory in; everything else is the configuration's."""
    settings = TaskManagerConfiguration.from_configuration(Configuration(EVERY_OPTION))
    assert _through_the_command_line(replace(settings, log_dir="/tmp/cluster-logs")) == replace(
        settings, log_dir="/tmp/cluster-logs"
    )


def test_the_spec_a_task_manager_runs_with_is_the_settings_in_seconds() -> None:
    settings = TaskManagerConfiguration.from_configuration(Configuration(EVERY_OPTION))
    spec = settings.spec(tm_id="tm-1", launch_token="t", jm_address=("h", 1), forward_logs_level=logging.DEBUG)
    assert spec == TaskManagerSpec(
        tm_id="tm-1",
        launch_token="t",
        jm_address=("h", 1),
        host="auto",
        num_slots=3,
        heartbeat_interval=1.5,
        heartbeat_timeout=7.0,
        cancellation_timeout=0.0,
        max_frame_bytes=3 * 1024 * 1024,
        switch_interval_ms=0.25,
        forward_logs_level=logging.DEBUG,
        forward_job_logs_only=False,
        prometheus=PrometheusSettings(ports="9250-9260", host="0.0.0.0"),
        log_dir="/var/log/strom with space=and equals",
        max_log_files=4,
        resource_id="tm-a",
        working_dir="/var/strom/work/tm_tm-a",
        local_state_root="/var/strom/local-state",
    )


def test_the_working_directory_is_named_after_the_resource_id() -> None:
    """FLIP-198: a process restarted with the same resource id finds the same working directory and local state."""
    settings = TaskManagerConfiguration.from_configuration(Configuration({"process.working-dir": "/w"}))
    spec = settings.spec(tm_id="tm-3", launch_token="t", jm_address=("h", 1))
    assert (spec.resource_id, spec.working_dir, spec.local_state_root) == (
        "tm-3",
        "/w/tm_tm-3",
        "/w/tm_tm-3/localState",
    )
    again = replace(settings, resource_id="tm-1").spec(tm_id="tm-4", launch_token="t", jm_address=("h", 1))
    assert (again.resource_id, again.working_dir, again.local_state_root) == (
        "tm-1",
        "/w/tm_tm-1",
        "/w/tm_tm-1/localState",
    )
    assert _through_the_command_line(replace(settings, resource_id="tm-1")).resource_id == "tm-1"


def test_a_bad_logging_level_or_reporter_is_refused_where_the_settings_are_made() -> None:
    with pytest.raises(ConfigurationError, match=r"DEBUG, INFO, WARNING, ERROR or CRITICAL for logging\.level"):
        TaskManagerConfiguration.from_configuration(Configuration({"logging.level": "chatty"}))
    with pytest.raises(ConfigurationError, match=r"PrometheusReporterFactory for metrics\.reporter\.prom"):
        TaskManagerConfiguration.from_configuration(Configuration({"metrics.reporter.prom.factory.class": "x"}))


def test_a_malformed_dynamic_property_ends_the_task_manager_with_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for bad in ("-Dno-equals", "-Dtaskmanager.numberOfTaskSlots=many", "-Dnot.an.option=1"):
        with pytest.raises(SystemExit, match="2"):
            parse_arguments(["--jm-host=h", "--jm-port=1", "--tm-id=t", bad])
        assert "strom-taskmanager: error: " in capsys.readouterr().err
