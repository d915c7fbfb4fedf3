"""The API reference (``make api-docs``: pdoc over the docstrings) builds, and the stream API it documents keeps a
docstring on every public method (with a runnable example on the streams'), so the reference cannot rot."""

from __future__ import annotations

import doctest
import inspect
from pathlib import Path

import pdoc
import pdoc.render
import pytest

import strom.api.connected_streams
import strom.api.datastream
import strom.api.environment
import strom.api.windowed_stream
from strom import StreamExecutionEnvironment
from strom.api.connected_streams import ConnectedStreams
from strom.api.datastream import DataStream, KeyedStream
from strom.api.windowed_stream import AllWindowedStream, WindowedStream

# the PyFlink module paths a user imports from; `make api-docs` documents these and the rest of the public surface
REFERENCE_MODULES = ["strom.datastream", "strom.common", "strom.state", "strom.table"]
STREAMS = [DataStream, KeyedStream]
DOCUMENTED = [*STREAMS, ConnectedStreams, WindowedStream, AllWindowedStream, StreamExecutionEnvironment]
EXAMPLE_MODULES = [strom.api.datastream, strom.api.connected_streams, strom.api.windowed_stream, strom.api.environment]


def public_methods(cls: type) -> list[str]:
    """Public functions, static and class methods of ``cls`` (inherited ones included)."""
    return sorted(
        n
        for n, v in inspect.getmembers(cls)
        if not n.startswith("_") and (inspect.isfunction(v) or inspect.ismethod(v))
    )


def test_the_api_reference_builds_a_page_per_module(tmp_path: Path) -> None:
    pdoc.render.configure(docformat="restructuredtext")  # as the Makefile's `pdoc --docformat restructuredtext`
    try:
        pdoc.pdoc(*REFERENCE_MODULES, output_directory=tmp_path)
    finally:
        pdoc.render.configure()
    pages = {m: tmp_path / (m.replace(".", "/") + ".html") for m in REFERENCE_MODULES}
    missing = [str(p) for p in pages.values() if not p.is_file()]
    assert not missing, f"expected a page per module; got none for {missing}"
    assert (tmp_path / "index.html").is_file()
    datastream = pages["strom.datastream"].read_text(encoding="utf-8")
    for method in ("DataStream.map", "DataStream.sink_to", "KeyedStream.reduce", "KeyedStream.process"):
        assert f'id="{method}"' in datastream, f"expected {method} documented on the strom.datastream page"
    assert "Flink's <code>flatMap</code>" in datastream  # the docstrings' rST literals rendered as code


@pytest.mark.parametrize("cls", DOCUMENTED, ids=lambda c: c.__name__)
def test_every_public_method_has_a_docstring(cls: type) -> None:
    # a method's own __doc__: an override without one (KeyedStream.map) does not borrow DataStream's
    undocumented = [n for n in public_methods(cls) if not (getattr(cls, n).__doc__ or "").strip()]
    assert not undocumented, (
        f"expected a docstring on every public method of {cls.__name__}; got none on {undocumented}; "
        "hint: say what it does in Flink's terms (Flink's name where it differs) and add a `>>>` example"
    )


@pytest.mark.parametrize("cls", STREAMS, ids=lambda c: c.__name__)
def test_every_public_stream_method_has_an_example(cls: type) -> None:
    without_example = [n for n in public_methods(cls) if ">>>" not in getattr(cls, n).__doc__]
    assert not without_example, f"expected a `>>>` example in {cls.__name__}'s {without_example}"


def test_the_examples_build_their_pipelines() -> None:
    """The ``>>>`` examples of the streams and the environment run against a fresh environment each (they build
    programs; none starts a job)."""
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = [t for module in EXAMPLE_MODULES for t in finder.find(module) if t.examples]
    for test in tests:
        test.globs["env"] = StreamExecutionEnvironment.get_execution_environment()
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert len(tests) >= 60, f"expected the examples of every stream method; found {len(tests)} docstrings"
    assert result.failed == 0, f"expected every example to run; {result.failed} of {result.attempted} failed above"
