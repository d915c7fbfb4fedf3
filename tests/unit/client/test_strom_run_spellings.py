"""``strom run`` takes Flink's spellings (``-py``/``--python``, ``-pyfs``/``--pyFiles``, ``-t``/``--target``) and says,
as Flink's CLI does, when a program submitted no job (issue 30 §4)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from strom import StreamExecutionEnvironment
from strom.cli import main as strom_main

THREADS = ["-D", "minicluster.taskmanager-mode=thread"]  # strom run sets the context configuration itself

PROGRAM = """
import sys
import helper_for_pyfs
from strom.datastream import StreamExecutionEnvironment

env = StreamExecutionEnvironment.get_execution_environment()
values = env.from_collection([1, 2]).map(lambda x: x + helper_for_pyfs.OFFSET).execute_and_collect()
with open(sys.argv[1], "w") as f:
    f.write(repr((sorted(values), sys.argv[2:])))
"""


@pytest.fixture
def restored() -> Iterator[None]:
    path, modules = list(sys.path), set(sys.modules)
    try:
        yield
    finally:
        StreamExecutionEnvironment.set_context_configuration(None)
        sys.path[:] = path
        for name in set(sys.modules) - modules:
            del sys.modules[name]


def test_py_pyfs_and_target_as_flink_spells_them(tmp_path: Path, restored: None) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "helper_for_pyfs.py").write_text("OFFSET = 100\n")
    job = tmp_path / "job.py"
    job.write_text(PROGRAM)
    out = tmp_path / "out.txt"
    args = ["run", *THREADS, "-t", "local", "-pyfs", str(lib / "helper_for_pyfs.py"), "-py", str(job), str(out), "x"]
    assert strom_main(args) == 0
    assert out.read_text() == repr(([101, 102], ["x"]))


def test_a_program_that_submits_no_job_is_told_so(
    tmp_path: Path, restored: None, capsys: pytest.CaptureFixture[str]
) -> None:
    job = tmp_path / "job.py"
    job.write_text(
        "from strom.datastream import StreamExecutionEnvironment\n"
        "StreamExecutionEnvironment.get_execution_environment().from_collection([1]).print()\n"
    )
    assert strom_main(["run", *THREADS, "--python", str(job)]) == 1
    assert "The program didn't contain a Flink job. Perhaps you forgot to call execute()" in capsys.readouterr().err


def test_pyfs_of_a_missing_path_and_no_program_are_refused(
    tmp_path: Path, restored: None, capsys: pytest.CaptureFixture[str]
) -> None:
    job = tmp_path / "job.py"
    job.write_text("")
    assert strom_main(["run", "-pyfs", str(tmp_path / "missing.py"), str(job)]) == 1
    assert "-pyfs expects an existing file or directory" in capsys.readouterr().err
    assert strom_main(["run"]) == 2
    assert "expected a Python program" in capsys.readouterr().err
