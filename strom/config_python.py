"""``PythonOptions``: the job's Python dependencies, under PyFlink's keys (re-exported by :mod:`strom.config`).

What ``StreamExecutionEnvironment.add_python_file``, ``set_python_requirements`` and ``add_python_archive`` set, as
PyFlink's do; the client ships the named files with the job and every TaskManager that runs one of its tasks installs
or unpacks them (:mod:`strom.runtime.python_environment_manager`).
"""

from __future__ import annotations

from strom.config_option import ConfigOption, _opt

__all__ = ["PythonOptions"]


class PythonOptions:
    """Flink's ``PythonOptions`` that strom implements (the other ``python.*`` keys configure PyFlink's JVM side)."""

    PYTHON_FILES: ConfigOption[str] = _opt(
        "python.files",
        str,
        "",
        "Python files of the job, comma-separated: .py files, package directories, directories of modules, "
        ".zip / .whl / .egg files. Shipped with the job and put on sys.path of its tasks on every TaskManager.",
    )
    PYTHON_REQUIREMENTS: ConfigOption[str] = _opt(
        "python.requirements",
        str,
        "",
        "A requirements.txt file whose packages the TaskManagers install (pip install --target) into an environment "
        "put on sys.path of the job's tasks, reused by every job with the same requirements (content hash). "
        "Optionally '#' and a directory of the packages to install from without an index (PyFlink's "
        "requirements_cache_dir, e.g. made by pip download -d): requirements.txt#cache_dir.",
    )
    PYTHON_ARCHIVES: ConfigOption[str] = _opt(
        "python.archives",
        str,
        "",
        "Archives of the job, comma-separated (.zip, .whl, .egg, .jar, .tar, .tar.gz, .tgz), each optionally "
        "'#target_dir': extracted on every TaskManager into the job's working directory under target_dir (default: "
        "the archive's file name); that working directory is on sys.path of the job's tasks.",
    )
