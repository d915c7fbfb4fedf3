"""``strom run`` takes Flink's spellings (``-py``/``--python``, ``-pyfs``/``--pyFiles``, ``-t``/``--target``) and says,
as Flink's CLI does, when a program submitted no job (issue 30 §4)."""

from __future__ import annotations

import ast
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


def test_pyreq_and_pyarch_become_the_python_dependencies_of_the_program(
    tmp_path: Path, restored: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    job = tmp_path / "job.py"
    out = tmp_path / "conf.txt"
    job.write_text(
        "import sys\n"
        "from strom.datastream import StreamExecutionEnvironment\n"
        "c = StreamExecutionEnvironment.get_execution_environment().get_configuration()\n"
        "with open(sys.argv[1], 'w') as f:\n"
        "    f.write(repr([c.get_string(k, '') for k in ('python.requirements', 'python.archives', 'python.files')]))\n"
    )
    args = ["run", "-pyreq", "req.txt#wheels", "--pyArchives", "data.zip#data,more.tgz", "-pyfs", "job.py"]
    assert strom_main([*args, str(job), str(out)]) == 1  # ran, submitted no job
    assert ast.literal_eval(out.read_text()) == [
        f"{tmp_path / 'req.txt'}#{tmp_path / 'wheels'}",
        f"{tmp_path / 'data.zip'}#data,{tmp_path / 'more.tgz'}",
        str(job),
    ]
