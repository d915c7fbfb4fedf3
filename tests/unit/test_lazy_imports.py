"""What a process imports: ``import strom`` runs no API module, a DataStream program's environment and a TaskManager
process import none of the heavy libraries a job may not use (issue 33: start-up). Each check runs in a fresh
interpreter, so that what this test process imported does not count; it asserts on ``sys.modules``, not on time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types

import pytest

import strom
from strom.lazy_exports import LazyExports

#: what a job that does not use them must not pay for: the file systems, the REST server, TLS stores, Parquet,
#: Prometheus, the configuration file's parser, Spark, Kafka, Redis, PostgreSQL, RocksDB
HEAVY = (
    "fsspec",
    "aiohttp",
    "cryptography",
    "pyarrow",
    "prometheus_client",
    "yaml",
    "pyspark",
    "confluent_kafka",
    "redis",
    "psycopg",
    "rocksdict",
    "zstandard",
)


def modules_after(statement: str) -> set[str]:
    """The top-level names of the modules in ``sys.modules`` of a fresh interpreter after ``statement``."""
    code = f"import json, sys\n{statement}\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p or os.getcwd() for p in sys.path)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_import_strom_imports_no_module_of_the_api() -> None:
    code = "import strom\nprint(sorted(m for m in sys.modules if m.startswith('strom.')), file=sys.stderr)"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p or os.getcwd() for p in sys.path)}
    done = subprocess.run([sys.executable, "-c", f"import sys\n{code}"], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == "['strom.lazy_exports', 'strom.version']"


@pytest.mark.parametrize(
    "statement",
    [
        "import strom",
        "from strom import StreamExecutionEnvironment",
        "from strom.datastream import StreamExecutionEnvironment",
        "import strom.connectors",
        "import strom.runtime.taskexecutor.__main__",  # what a TaskManager process imports before it registers
        "import strom.deploy.minicluster",  # the client's JobManager side (the REST endpoint's aiohttp comes later)
        "from strom.connectors.file_system import remove_abandoned_parts_of",  # a closing cluster's clean-up
    ],
)
def test_no_heavy_library_is_imported_before_a_job_uses_it(statement: str) -> None:
    assert modules_after(statement) & set(HEAVY) == set()


def test_a_lazy_name_is_imported_on_first_use_and_kept() -> None:
    package = types.ModuleType("lazy_exports_probe")
    sys.modules[package.__name__] = package
    try:
        lazy = LazyExports(package.__name__, {"json": ("dumps",), "os.path": ("join",)})
        assert lazy.names == ("dumps", "join")
        assert lazy.load("dumps") is json.dumps
        assert package.dumps is json.dumps  # kept: the next access is a plain attribute
        assert "join" in lazy.dir(vars(package)) and "dumps" in lazy.dir(vars(package))
        with pytest.raises(AttributeError, match="has no attribute 'nope'"):
            lazy.load("nope")
    finally:
        del sys.modules[package.__name__]


def test_a_name_exported_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="exported once"):
        LazyExports("p", {"json": ("dumps",), "pickle": ("dumps",)})


def test_strom_lists_its_exports_and_refuses_unknown_names() -> None:
    assert set(strom.__all__) <= set(dir(strom))
    assert not hasattr(strom, "NoSuchThing")
    with pytest.raises(ImportError):
        exec("from strom import NoSuchThing", {})
