"""PyFlink's module paths exist under ``strom`` and name strom's own classes (one definition each); the generic
annotations PyFlink programs write are subscriptable; the local default parallelism is the CPU count."""

from __future__ import annotations

import importlib
import inspect
import os
from collections.abc import Iterable

import pytest

import strom
from strom import Configuration, StreamExecutionEnvironment

PATHS = [
    "strom.common",
    "strom.common.time",
    "strom.common.typeinfo",
    "strom.common.configuration",
    "strom.common.execution_config",
    "strom.common.job_status",
    "strom.common.serialization",
    "strom.common.types",
    "strom.common.watermark_strategy",
    "strom.datastream",
    "strom.datastream.async_data_stream",
    "strom.datastream.async_retry_predicates",
    "strom.datastream.checkpoint_config",
    "strom.datastream.checkpointing_mode",
    "strom.datastream.connectors",
    "strom.datastream.connectors.file_system",
    "strom.datastream.connectors.number_seq",
    "strom.datastream.data_stream",
    "strom.datastream.execution_mode",
    "strom.datastream.externalized_checkpoint_retention",
    "strom.datastream.formats.csv",
    "strom.datastream.formats.parquet",
    "strom.datastream.functions",
    "strom.datastream.output_tag",
    "strom.datastream.state_backend",
    "strom.datastream.state",
    "strom.datastream.stream_execution_environment",
    "strom.datastream.time_domain",
    "strom.datastream.timerservice",
    "strom.datastream.window",
]


@pytest.mark.parametrize("path", PATHS)
def test_each_pyflink_module_path_re_exports_strom_classes_without_defining_its_own(path: str) -> None:
    module = importlib.import_module(path)
    assert module.__all__, path
    for name in module.__all__:
        value = getattr(module, name)
        if inspect.ismodule(value):  # strom.datastream.async_retry_predicates: a module path of its own
            assert value.__name__.startswith("strom.datastream.")
            continue
        home = getattr(value, "__module__", "")
        assert home.startswith(
            ("strom.api", "strom.client", "strom.config", "strom.connectors", "strom.formats", "strom.runtime")
        ), f"{path}.{name} is defined in {home}, not re-exported"
        if hasattr(strom, name):
            assert getattr(strom, name) is value, f"{path}.{name} is not strom.{name}"


def test_a_pyflink_program_annotates_with_generic_window_contexts_and_functions() -> None:
    from strom.datastream import ProcessWindowFunction, WindowFunction
    from strom.datastream.functions import AllWindowFunction, MapFunction, ProcessAllWindowFunction
    from strom.datastream.state import BroadcastState, ReadOnlyBroadcastState
    from strom.datastream.window import CountWindow, TimeWindow

    class Count(ProcessWindowFunction[tuple, tuple, str, TimeWindow]):
        def process(
            self, key: str, context: ProcessWindowFunction.Context[TimeWindow], elements: Iterable[tuple]
        ) -> Iterable[tuple]:
            return [(key, len(list(elements)))]

    class Sum(WindowFunction[tuple, tuple, str, CountWindow]):
        def apply(self, key: str, window: CountWindow, inputs: Iterable[tuple]) -> Iterable[tuple]:
            return [(key, sum(i[0] for i in inputs))]

    assert ProcessAllWindowFunction.Context[TimeWindow] is not None
    assert AllWindowFunction[int, int, TimeWindow] is not None
    assert MapFunction[int, str] is not None
    assert BroadcastState[str, int] is not None and ReadOnlyBroadcastState[str, int] is not None
    assert Sum().apply("k", CountWindow(), [(1,), (2,)]) == [("k", 3)]
    assert Count is not None


def test_the_local_default_parallelism_is_the_cpu_count_unless_configured() -> None:
    cores = len(os.sched_getaffinity(0))
    assert StreamExecutionEnvironment.get_execution_environment().get_parallelism() == cores
    configured = StreamExecutionEnvironment.get_execution_environment(Configuration({"parallelism.default": 3}))
    assert configured.get_parallelism() == 3
    env = StreamExecutionEnvironment.get_execution_environment()
    env.from_sequence(1, 10).map(str).print()
    assert {n.parallelism for n in env.get_stream_graph().nodes.values()} == {cores}
    assert env.set_parallelism(1).get_parallelism() == 1
