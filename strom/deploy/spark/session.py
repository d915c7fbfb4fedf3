"""The SparkSession strom runs on: the settings it applies, the ones it checks, the capacity it needs.

strom creates a SparkSession when the program brings none (``strom run --target spark``, ``execution.target:
spark``) and keeps it for the later jobs of the process (a JVM takes seconds to start), stopping it when the
process exits; a session the program passes in (``get_execution_environment(spark=...)``), or one already
active in the process, is used as it is and only checked.

Under ``strom run --target spark`` the program may build its own session (``SparkSession.builder.config(...)
.getOrCreate()``): as ``spark-submit`` does, strom's settings and the ``-D spark.*`` keys are then the defaults of
the JVM that session starts (:func:`prepare_driver`), and the program's own settings win over them.
"""

from __future__ import annotations

import atexit
import ipaddress
import logging
import os
import re
import shlex
import sys
from typing import TYPE_CHECKING

from strom.config import Configuration, SparkOptions
from strom.exceptions import ClusterError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "STROM_SPARK_SETTINGS",
    "check_session",
    "create_session",
    "get_or_create_session",
    "is_local_master",
    "is_loopback_master",
    "local_cores",
    "prepare_driver",
    "python_of_task_managers",
    "runs_on_this_machine",
    "session_settings",
    "ship_py_files",
]

log = logging.getLogger(__name__)

#: setting -> (value, why strom wants it)
STROM_SPARK_SETTINGS: dict[str, tuple[str, str]] = {
    "spark.speculation": ("false", "a speculative copy of a TaskManager's task would only be fenced off"),
    "spark.python.worker.killOnIdleTimeout": (
        "false",
        "a TaskManager's Python worker exchanges no data with Spark for the job's whole life",
    ),
    "spark.python.worker.reuse": (
        "false",
        "each TaskManager gets a fresh Python worker, which exits with it (no thread or module state lingers)",
    ),
    "spark.python.task.killTimeout": ("1s", "a cancelled TaskManager's worker is killed soon after"),
}

#: only when the executors are this machine (local mode, a master on loopback): nothing bound beyond loopback
_LOCAL_SETTINGS = {
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.host": "127.0.0.1",
    "spark.ui.enabled": "false",
}

#: settings for a quiet driver, unless the user sets them: Spark's progress bars (``[Stage 0:>``) would share the
#: terminal with the job's output
_QUIET_SETTINGS = {"spark.ui.showConsoleProgress": "false"}

_LOCAL = re.compile(r"^local(?:\[(\*|\d+)(?:\s*,\s*(\d+))?\])?$")
_STANDALONE = re.compile(r"^spark://([^/]+)/?$")
_PY_FILES = "spark.submit.pyFiles"


def is_local_master(master: str) -> bool:
    return _LOCAL.match(master.strip()) is not None


def is_loopback_master(master: str) -> bool:
    """A standalone master (``spark://host:port``, or several for high availability) whose every host is a loopback
    address: a worker can only register with it from this machine, so every executor runs here."""
    m = _STANDALONE.match(master.strip())
    if m is None:
        return False
    hosts = [hp.rpartition(":")[0].strip("[]") for hp in m.group(1).split(",")]
    return all(_is_loopback_host(h) for h in hosts)


def runs_on_this_machine(master: str) -> bool:
    """The executors of ``master`` run on this machine: local mode, or a standalone master on loopback. Then they
    reach what the driver reaches (its loopback addresses, its file system, its Python)."""
    return is_local_master(master) or is_loopback_master(master)


def _is_loopback_host(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def local_cores(master: str) -> int | None:
    """Task slots of a ``local[...]`` master (``None`` for a cluster manager)."""
    m = _LOCAL.match(master.strip())
    if m is None:
        return None
    n = m.group(1)
    if n is None:
        return 1
    return (os.cpu_count() or 1) if n == "*" else int(n)


def get_or_create_session(config: Configuration, app_name: str) -> SparkSession:
    """The process's active SparkSession (checked), else a new one for ``config`` (see :func:`create_session`)."""
    _require_pyspark()
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        check_session(active)
        return active
    spark = create_session(config, app_name)
    atexit.register(spark.stop)
    return spark


def _require_pyspark() -> None:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise ClusterError(
            "expected pyspark for execution.target 'spark'; got no module 'pyspark'; "
            "hint: pip install -e '.[spark]' in strom's clone (and a Java 17+ runtime)"
        ) from None


def create_session(config: Configuration, app_name: str) -> SparkSession:
    """A SparkSession for ``config``'s ``spark.master`` with strom's settings and the ``spark.*`` passthrough."""
    from pyspark.sql import SparkSession

    master = config.get(SparkOptions.MASTER)
    builder = SparkSession.builder.master(master).appName(app_name)
    here = runs_on_this_machine(master)
    settings = session_settings(config)
    for key, value in settings.items():
        builder = builder.config(key, value)
    # PySpark starts its workers with $PYSPARK_PYTHON (read once, when the SparkContext starts), else
    # `python3`; when the executors are this machine, they get this interpreter (and strom).
    set_python = here and "PYSPARK_PYTHON" not in os.environ
    if set_python:
        os.environ["PYSPARK_PYTHON"] = sys.executable
    try:
        spark = builder.getOrCreate()
    except Exception as exc:
        raise ClusterError(
            f"expected a SparkSession on master '{master}'; got {type(exc).__name__}: {str(exc).strip()[:500]}; "
            "hint: Spark needs a Java 17+ runtime (`java -version`) and a reachable master"
        ) from exc
    finally:
        if set_python:
            del os.environ["PYSPARK_PYTHON"]
    ship_py_files(spark, settings.get(_PY_FILES, ""))
    return spark


def session_settings(config: Configuration) -> dict[str, str]:
    """The settings of a SparkSession strom starts for ``config``: strom's, the quiet driver's, loopback-only ones for
    executors on this machine, and then the user's own ``spark.*`` keys, which win."""
    settings = {k: v for k, (v, _why) in STROM_SPARK_SETTINGS.items()}
    settings.update(_QUIET_SETTINGS)
    if runs_on_this_machine(config.get(SparkOptions.MASTER)):
        settings.update(_LOCAL_SETTINGS)
    settings.update(config.spark_settings())
    return settings


def prepare_driver(config: Configuration, app_name: str) -> None:
    """Before the program runs (``strom run --target spark``), as ``spark-submit``: the JVM of the SparkSession the
    program builds — or strom builds for it — starts with ``spark.master``, the app name and :func:`session_settings`
    as its defaults (``PYSPARK_SUBMIT_ARGS``); the program's ``SparkSession.builder.config(...)`` wins over them. A
    JVM already running in the process is left as it is."""
    _require_pyspark()
    from pyspark import SparkContext

    if SparkContext._active_spark_context is not None:
        return
    args = ["--master", config.get(SparkOptions.MASTER), "--name", app_name]
    for key, value in session_settings(config).items():
        args += ["--conf", f"{key}={value}"]
    existing = os.environ.get("PYSPARK_SUBMIT_ARGS", "pyspark-shell")  # the user's own come later: they win
    os.environ["PYSPARK_SUBMIT_ARGS"] = f"{shlex.join(args)} {existing}"


def python_of_task_managers(spark: SparkSession) -> str:
    """The Python the TaskManagers of ``spark`` run: ``spark.pyspark.python``, else the ``PYSPARK_PYTHON`` PySpark
    read. When neither is set and the executors are this machine, the driver's own (``sys.executable``): PySpark's
    default ``python3`` is whatever comes first on ``PATH``, often not the (unactivated) venv that has strom."""
    sc = spark.sparkContext
    configured = sc.getConf().get("spark.pyspark.python")
    if configured:
        return str(configured)
    if "PYSPARK_PYTHON" not in os.environ and sc.pythonExec == "python3" and runs_on_this_machine(str(sc.master)):
        sc.pythonExec = sys.executable  # read when an RDD's Python function is wrapped for the JVM
    return str(sc.pythonExec)


def ship_py_files(spark: SparkSession, py_files: str) -> None:
    """Ship ``spark.submit.pyFiles`` (comma-separated ``.py`` / ``.zip`` / ``.egg``) to the executors.

    spark-submit ships them when it launches the driver's JVM, which PySpark does for the first SparkContext of a
    process only: a session created after another one was stopped would give its executors none of them.
    ``SparkContext.addPyFile`` ships them whatever started the JVM; a file Spark already lists is left alone."""
    sc = spark.sparkContext
    listed = {f.rstrip("/").rpartition("/")[2] for f in sc.listFiles}
    for path in (p.strip() for p in py_files.split(",")):
        if path and os.path.basename(path) not in listed:
            sc.addPyFile(path)


def check_session(spark: SparkSession) -> None:
    """Warn about settings of a session strom did not create that work against hosted TaskManagers."""
    conf = spark.sparkContext.getConf()
    for key, (value, why) in STROM_SPARK_SETTINGS.items():
        if key == "spark.python.task.killTimeout":
            continue  # a preference, not a hazard
        actual = conf.get(key)
        if actual is not None and actual.strip().lower() != value:
            log.warning(
                "Spark setting %s: expected %s for strom; got %s (%s); hint: set it when building the SparkSession",
                key,
                value,
                actual,
                why,
            )
