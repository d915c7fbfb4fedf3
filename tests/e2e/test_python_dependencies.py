"""``set_python_requirements``, ``add_python_archive`` and ``add_python_file`` on every target, as in PyFlink: the
TaskManagers of a MiniCluster, of a standalone cluster and of Spark (local mode) install the job's requirements with
pip into an environment cached by content hash, unpack its archives into the job's working directory and put its
files on the tasks' ``sys.path`` — none of which is on the TaskManagers' own path.

The requirement is a tiny wheel the test builds in a temporary directory and hands over as PyFlink's
``requirements_cache_dir`` (``pip install --no-index --find-links``): no test reaches the network."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest
from standalone_cluster import running_cluster

pytestmark = [pytest.mark.slow]

STROM = str(Path(sys.executable).with_name("strom"))

JOB = textwrap.dedent(
    """
    import importlib.resources, json, os, sys
    from strom import StreamExecutionEnvironment

    out, requirements, cache, archive, helper = sys.argv[1:6]

    def use_dependencies(x):
        import tinypkg_strom, helper_mod_strom
        greeting = importlib.resources.files("jobdata").joinpath("greeting.txt").read_text().strip()
        return json.dumps({
            "value": tinypkg_strom.shout(helper_mod_strom.twice(x)),
            "greeting": greeting,
            "package": tinypkg_strom.__file__,
            "helper": helper_mod_strom.__file__,
        })

    def write(line):
        with open(out, "a") as f:
            f.write(line + "\\n")

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.set_python_requirements(requirements, cache)
    env.add_python_archive(archive, "jobdata")
    env.add_python_file(helper)
    env.from_collection([1, 2, 3]).map(use_dependencies).add_sink(write)
    env.execute("python dependencies")
    """
)


def build_wheel(directory: Path) -> Path:
    """A pure-Python wheel of ``tinypkg-strom`` 0.1 (module ``tinypkg_strom``), written by hand: no build backend."""
    files = {
        "tinypkg_strom/__init__.py": "def shout(x):\n    return f'{x}!'\n",
        "tinypkg_strom-0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: tinypkg-strom\nVersion: 0.1\n",
        "tinypkg_strom-0.1.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: strom-tests\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(text.encode())}")
    record.append("tinypkg_strom-0.1.dist-info/RECORD,,")
    files["tinypkg_strom-0.1.dist-info/RECORD"] = "\n".join(record) + "\n"
    wheel = directory / "tinypkg_strom-0.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return wheel


def job_arguments(tmp_path: Path) -> list[str]:
    cache = tmp_path / "wheels"
    cache.mkdir()
    build_wheel(cache)
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("tinypkg-strom==0.1\n")
    archive = tmp_path / "data.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("greeting.txt", "hello from the archive\n")
    helpers = tmp_path / "helpers"
    helpers.mkdir()
    (helpers / "helper_mod_strom.py").write_text("def twice(x):\n    return 2 * x\n")
    (tmp_path / "job").mkdir()
    job = tmp_path / "job" / "deps_job.py"
    job.write_text(JOB)
    out = tmp_path / "out.jsonl"
    return [str(job), str(out), str(requirements), str(cache), str(archive), str(helpers / "helper_mod_strom.py")]


def check_output(out: Path) -> None:
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["value"] for r in rows) == ["2!", "4!", "6!"]
    assert {r["greeting"] for r in rows} == {"hello from the archive"}
    for r in rows:  # from the TaskManagers' installation and shipped copy, not from the client's paths
        assert "/requirements/" in r["package"] and "strom-python" in r["package"], r
        assert "/files/" in r["helper"] and "strom-python" in r["helper"], r


@pytest.mark.timeout(300)
def test_on_the_minicluster(tmp_path: Path) -> None:
    args = job_arguments(tmp_path)
    proc = subprocess.run([STROM, "run", *args], capture_output=True, text=True, timeout=280, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    check_output(Path(args[1]))


@pytest.mark.processes
@pytest.mark.timeout(300)
def test_on_a_standalone_cluster(tmp_path: Path) -> None:
    args = job_arguments(tmp_path)
    with running_cluster(tmp_path / "cluster", taskmanagers=1) as cluster:
        proc = cluster.strom("run", "-m", cluster.m, *args, timeout=240)
        assert proc.returncode == 0, proc.stderr[-3000:]
    check_output(Path(args[1]))


@pytest.mark.spark
@pytest.mark.timeout(300)
def test_on_spark(tmp_path: Path) -> None:
    args = job_arguments(tmp_path)
    spark = ["--target", "spark", "--spark-master", "local[2]"]
    proc = subprocess.run([STROM, "run", *spark, *args], capture_output=True, text=True, timeout=280, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    check_output(Path(args[1]))
