"""Flink's PrometheusReporter names and labels, and the reporter's configuration — pure mapping, plus one
real HTTP scrape of a reporter on a free port."""

from __future__ import annotations

import urllib.request

import pytest
from prometheus_client.exposition import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from strom.config import Configuration
from strom.exceptions import ConfigurationError
from strom.runtime.metrics.prometheus import (
    PROMETHEUS_FACTORY,
    PrometheusReporter,
    PrometheusSettings,
    Reading,
    families,
    parse_port_range,
    prometheus_settings,
)
from strom.runtime.metrics.scope import (
    JOB_MANAGER_JOB_SCOPE,
    OPERATOR_SCOPE,
    TASK_SCOPE,
    filter_characters,
    prometheus_labels,
    prometheus_name,
)

TASK_VARS = {"<host>": "my-host", "<job_name>": "my job", "<task_name>": "Source: s -> map", "<subtask_index>": "0"}


@pytest.mark.timeout(10)
def test_names_join_the_logical_scope_with_underscores() -> None:
    assert prometheus_name(TASK_SCOPE, "numRecordsIn") == "flink_taskmanager_job_task_numRecordsIn"
    assert prometheus_name((*OPERATOR_SCOPE, "my group"), "my.counter") == (
        "flink_taskmanager_job_task_operator_my_group_my_counter"
    )
    assert prometheus_name(JOB_MANAGER_JOB_SCOPE, "lastCheckpointDuration") == (
        "flink_jobmanager_job_lastCheckpointDuration"
    )
    assert filter_characters("Source: s -> map") == "Source:_s____map"


@pytest.mark.timeout(10)
def test_labels_are_the_variables_without_brackets_values_filtered() -> None:
    assert prometheus_labels(TASK_VARS) == {
        "host": "my_host",
        "job_name": "my_job",
        "task_name": "Source:_s____map",
        "subtask_index": "0",
    }
    assert prometheus_labels({"<a-b>": "1", "<a_b>": "2"}) is None  # two variables, one label: not reported


@pytest.mark.timeout(10)
def test_families_render_as_flinks_reporter_and_parse_back() -> None:
    readings = [
        Reading(TASK_SCOPE, "numRecordsIn", TASK_VARS, value=42.0),
        Reading(TASK_SCOPE, "numRecordsIn", {**TASK_VARS, "<subtask_index>": "1"}, value=8.0),
        Reading(
            (*OPERATOR_SCOPE, "sizes"),
            "value",
            TASK_VARS,
            statistics={
                "count": 3,
                "min": 1,
                "max": 9,
                "mean": 4,
                "p50": 2,
                "p75": 5,
                "p95": 8,
                "p98": 8.5,
                "p99": 8.8,
                "p999": 8.99,
            },
        ),
        Reading(TASK_SCOPE, "dup", {"<a-b>": "1", "<a_b>": "2"}, value=1.0),
    ]
    fams = families(readings)
    text = generate_latest(_Registry(fams)).decode()
    parsed = {f.name: f for f in text_string_to_metric_families(text)}
    io = parsed["flink_taskmanager_job_task_numRecordsIn"]
    assert io.type == "gauge"
    assert sorted((s.labels["subtask_index"], s.value) for s in io.samples) == [("0", 42.0), ("1", 8.0)]
    assert io.documentation == "numRecordsIn (scope: taskmanager_job_task)"
    summary = parsed["flink_taskmanager_job_task_operator_sizes_value"]
    assert summary.type == "summary"
    quantiles = {s.labels.get("quantile"): s.value for s in summary.samples if s.name.endswith("_value")}
    assert quantiles == {"0.0": 1, "0.5": 2, "0.75": 5, "0.95": 8, "0.98": 8.5, "0.99": 8.8, "0.999": 8.99, "1.0": 9}
    assert [s.value for s in summary.samples if s.name.endswith("_count")] == [3]
    assert "flink_taskmanager_job_task_dup" not in parsed


class _Registry:
    def __init__(self, fams: list) -> None:  # type: ignore[type-arg]
        self.fams = fams

    def collect(self) -> list:  # type: ignore[type-arg]
        return self.fams


@pytest.mark.timeout(10)
def test_port_ranges_as_flinks() -> None:
    assert parse_port_range("9249") == [9249]
    assert parse_port_range("9249-9251") == [9249, 9250, 9251]
    assert parse_port_range("9249, 9260-9261") == [9249, 9260, 9261]
    assert parse_port_range("0") == [0]
    for bad in ("", "x", "9260-9249", "70000"):
        with pytest.raises(ConfigurationError, match=r"metrics\.reporter\.prom\.port"):
            parse_port_range(bad)


@pytest.mark.timeout(10)
def test_settings_off_unless_configured() -> None:
    assert prometheus_settings(Configuration()) is None
    on = Configuration({"metrics.reporter.prom.factory.class": PROMETHEUS_FACTORY, "metrics.reporter.prom.port": "0"})
    assert prometheus_settings(on) == PrometheusSettings(ports="0", host="127.0.0.1")
    with pytest.raises(ConfigurationError, match="PrometheusReporterFactory"):
        prometheus_settings(Configuration({"metrics.reporter.prom.factory.class": "com.example.Other"}))
    with pytest.raises(ConfigurationError, match="port"):
        prometheus_settings(
            Configuration(
                {"metrics.reporter.prom.factory.class": PROMETHEUS_FACTORY, "metrics.reporter.prom.port": "a"}
            )
        )


@pytest.mark.timeout(20)
def test_reporter_serves_metrics_over_http_and_takes_the_next_free_port() -> None:
    def read() -> list[Reading]:
        return [Reading(TASK_SCOPE, "numRecordsIn", TASK_VARS, value=5.0)]

    with PrometheusReporter(read, PrometheusSettings(ports="0", host="127.0.0.1"), owner="test") as first:
        port = int(first.url.rsplit(":", 1)[1].split("/")[0])
        settings = PrometheusSettings(ports=f"{port},{port}-{port + 40}", host="127.0.0.1")
        with PrometheusReporter(read, settings, owner="second") as second:
            assert second.url != first.url  # its first port was taken: the next free one of the range
            with urllib.request.urlopen(second.url, timeout=10) as response:
                text = response.read().decode()
    (family,) = [f for f in text_string_to_metric_families(text) if f.name == "flink_taskmanager_job_task_numRecordsIn"]
    assert family.samples[0].value == 5.0
    assert family.samples[0].labels["job_name"] == "my_job"
