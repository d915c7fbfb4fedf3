"""The executor of ``execution.target`` (Flink's ``PipelineExecutorServiceLoader``): the lookup, each factory's
compatibility, and the environment handing its JobGraph to the executor it finds — no cluster is started."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from strom import Configuration, StreamExecutionEnvironment
from strom.cli import main as strom_main
from strom.client.executor_service_loader import DEFAULT_EXECUTOR_SERVICE_LOADER, PipelineExecutorServiceLoader
from strom.client.local_executor import LocalExecutor, LocalExecutorFactory
from strom.client.pipeline_executor import PipelineExecutor, PipelineExecutorFactory
from strom.client.remote_executor import RemoteExecutor, RemoteExecutorFactory
from strom.client.spark_executor import SparkExecutor, SparkExecutorFactory
from strom.config import DeploymentOptions
from strom.exceptions import ConfigurationError, InvalidProgramError

FACTORIES: dict[str, tuple[type[PipelineExecutorFactory], type[PipelineExecutor]]] = {
    "local": (LocalExecutorFactory, LocalExecutor),
    "spark": (SparkExecutorFactory, SparkExecutor),
    "remote": (RemoteExecutorFactory, RemoteExecutor),
}


def _target(name: str) -> Configuration:
    return Configuration({DeploymentOptions.TARGET.key: name})


def test_the_targets_are_local_spark_and_remote_in_that_order() -> None:
    assert DEFAULT_EXECUTOR_SERVICE_LOADER.get_executor_names() == ("local", "spark", "remote")
    assert DEFAULT_EXECUTOR_SERVICE_LOADER.targets_collecting_results() == ("local", "spark")


@pytest.mark.parametrize("target", list(FACTORIES))
def test_each_factory_is_compatible_with_its_own_target_only(target: str) -> None:
    factory_type, executor_type = FACTORIES[target]
    factory = DEFAULT_EXECUTOR_SERVICE_LOADER.get_executor_factory(_target(target))
    assert type(factory) is factory_type and factory.name == target
    assert type(factory.get_executor(_target(target))) is executor_type
    for other, (other_type, _) in FACTORIES.items():
        assert other_type().is_compatible_with(_target(target)) is (other == target)


def test_no_target_configured_is_the_embedded_minicluster() -> None:
    assert type(DEFAULT_EXECUTOR_SERVICE_LOADER.get_executor_factory(Configuration())) is LocalExecutorFactory


def test_an_unknown_target_names_the_known_ones_and_how_to_set_it() -> None:
    with pytest.raises(ConfigurationError) as caught:
        DEFAULT_EXECUTOR_SERVICE_LOADER.get_executor_factory(_target("yarn"))
    assert str(caught.value) == (
        "expected execution.target to be one of local, spark, remote; got 'yarn'; hint: set it with "
        "-D execution.target=... (strom run --target), or leave it unset for an embedded MiniCluster"
    )
    with pytest.raises(ConfigurationError, match=r"one of local, spark, remote; got 'LOCAL'"):  # as exact as before
        DEFAULT_EXECUTOR_SERVICE_LOADER.get_executor_factory(_target("LOCAL"))


def test_two_factories_claiming_one_target_is_an_error() -> None:
    class Twin(LocalExecutorFactory):
        pass

    loader = PipelineExecutorServiceLoader({"local": LocalExecutorFactory(), "twin": Twin()})
    with pytest.raises(ConfigurationError, match=r"one executor factory compatible with execution.target 'local'"):
        loader.get_executor_factory(Configuration())


class _RecordingExecutor(PipelineExecutor):
    def __init__(self, calls: list[tuple[Any, ...]]) -> None:
        self.calls = calls

    def execute(self, job_graph: Any, configuration: Configuration, *, spark: Any = None) -> Any:
        self.calls.append((job_graph, configuration, spark))
        return "the job's client"


def test_the_environment_hands_its_job_graph_to_the_executor_of_its_target(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[Any, ...]] = []

    class Recording(PipelineExecutorFactory):
        name = "recording"

        def get_executor(self, configuration: Configuration) -> PipelineExecutor:
            return _RecordingExecutor(calls)

    loader = PipelineExecutorServiceLoader({"recording": Recording()})
    monkeypatch.setattr("strom.api.environment.DEFAULT_EXECUTOR_SERVICE_LOADER", loader)
    session = object()
    env = StreamExecutionEnvironment(_target("recording"), spark=None)
    env._spark = session  # type: ignore[assignment]  # what get_execution_environment(spark=...) keeps
    env.from_sequence(1, 3).map(lambda x: x).print()
    assert env.execute_async("recorded") == "the job's client"
    [(job_graph, configuration, spark)] = calls
    assert job_graph.job_name == "recorded" and configuration is env.get_configuration() and spark is session


def test_execute_and_collect_is_refused_on_a_target_that_cannot_collect_before_anything_is_contacted() -> None:
    env = StreamExecutionEnvironment.get_execution_environment(_target("remote"))
    with pytest.raises(InvalidProgramError) as caught:
        env.from_sequence(1, 3).execute_and_collect()
    assert str(caught.value) == (
        "expected execution.target 'local' or 'spark' for execute_and_collect; got 'remote'; hint: a remote job's "
        "output goes to a sink (FileSink, ...); collect runs on an embedded cluster"
    )


def test_strom_run_offers_the_executors_targets_and_runs_a_program_whose_target_is_unknown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "job.py"
    script.write_text(
        "from strom import StreamExecutionEnvironment\n"
        "print('the program ran')\n"
        "env = StreamExecutionEnvironment.get_execution_environment()\n"
        "env.from_sequence(1, 3).print()\n"
        "env.execute()\n"
    )
    try:
        assert strom_main(["run", "-D", "execution.target=yarn", str(script)]) == 1
        out = capsys.readouterr()
        assert "the program ran" in out.out
        assert "strom run: expected execution.target to be one of local, spark, remote; got 'yarn'" in out.err
        with pytest.raises(SystemExit, match="2"):  # argparse: not one of the choices
            strom_main(["run", "--target", "yarn", str(script)])
        assert "choose from 'local', 'spark', 'remote'" in capsys.readouterr().err
    finally:
        StreamExecutionEnvironment.set_context_configuration(None)
