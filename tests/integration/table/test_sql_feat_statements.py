"""CREATE/DROP FUNCTION, SHOW FUNCTIONS, ALTER TABLE/VIEW, SHOW CREATE, SHOW COLUMNS, SHOW CURRENT and DESCRIBE
against Flink 2.3's own outputs: ``tests/data/flink_sql/feat_queries.py`` ran the same steps in PyFlink and stored
each step's printed result or error as ``feat_<section>_<step>.txt``; here every step runs on strom in the same order
and its output must equal Flink's (an error: Flink's message is contained in strom's, and the class agrees)."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import sys
from pathlib import Path
from types import ModuleType

import pytest

from strom.table import EnvironmentSettings, TableEnvironment

FACTS = Path(__file__).resolve().parents[2] / "data" / "flink_sql"


def _program() -> ModuleType:
    spec = importlib.util.spec_from_file_location("feat_queries", FACTS / "feat_queries.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # its top level imports only the standard library
    return module


PROGRAM = _program()
# steps whose output differs from Flink's on purpose (docs/sql.md says how): the fact is not compared
DIFFERENT = {
    "fn_show_all": "strom lists its own built-in functions",
    "fn_show_all_like": "",
    "fn_create_bad_path": "strom loads the function at CREATE (Flink at first use)",
    "fn_create_bad_module": "strom loads the function at CREATE (Flink at first use)",
    "fn_select_bad_path": "",
    "fn_show_user_end": "bad, bad2 were refused at CREATE",
    "fn_unknown_function": "strom's message for an unknown function",
    "fn_create_system_again": "Flink's cause only",
    "fn_select_udaf": "Flink's Python UDAF emits once per bundle (+I 3); strom per row (+I 1, -U 1, +U 3)",
    "alter_show_create_view": "the view's query as written, not Calcite's expansion",
    "alter_show_create_view_altered": "",
    "alter_show_create_temp_view": "",
    "ow_overwrite_unknown_partition": "strom's position form: 'at line 1, column 32: Unknown target column'",
    "alter_show_columns_ilike": "Flink 2.3 does not parse ILIKE here; strom neither (its message)",
}


def _listing(root: Path) -> str:
    """The program's ``ls`` step: each file's partition directory and content (hidden files by their directory)."""
    lines = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root)
        hidden = any(part.startswith((".", "_")) for part in rel.parts)
        lines.append(
            f"{'<hidden> ' if hidden else ''}{rel.parent if str(rel.parent) != '.' else ''} "
            f"{'' if hidden else path.read_text()!r}"
        )
    return "".join(f"{line}\n" for line in lines)


def _output(t_env: TableEnvironment, statement: str) -> str:
    if statement.startswith("ls "):
        return _listing(Path(statement[3:]))
    try:
        result = t_env.execute_sql(statement)
        if statement.startswith("INSERT"):
            result.wait()
            return "done\n"
    except Exception as exc:  # the error is the output
        return f"{type(exc).__name__}: {exc}"
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        result.print()
    return buffer.getvalue()


# Flink's exception classes that strom raises as its own
_CLASSES = {"IllegalStateException": "TableException"}


def _same(expected: str, got: str, *, final_table: bool) -> bool:
    first = expected.splitlines()[0]
    if first.startswith(("org.apache.flink", "java.")):
        cls, _, message = first.partition(": ")
        name = cls.rsplit(".", 1)[1]
        return got.startswith(_CLASSES.get(name, name)) and message in got
    if final_table:  # a BATCH result read from several files: the rows in any order
        return sorted(expected.splitlines()) == sorted(got.splitlines())
    return got == expected


def _check(section: str, steps: list[tuple[str, str]], *, batch: bool = False, root: Path | None = None) -> None:
    sys.path.insert(0, str(FACTS))
    try:
        settings = EnvironmentSettings.in_batch_mode() if batch else EnvironmentSettings.in_streaming_mode()
        t_env = TableEnvironment.create(settings)
        t_env.get_config().set("parallelism.default", "1")
        mismatches = []
        for name, statement in steps:
            key = f"{section}_{name}"
            if root is not None:
                statement = statement.replace(PROGRAM.FS, str(root))
            got = _output(t_env, statement)
            if key in DIFFERENT:
                continue
            expected = (FACTS / f"feat_{key}.txt").read_text()
            if not _same(expected, got, final_table=name.startswith("select")):
                mismatches.append(f"{key}:\n--- flink\n{expected}--- strom\n{got}")
        assert not mismatches, "\n".join(mismatches)
    finally:
        sys.path.remove(str(FACTS))


def test_function_ddl_as_flink() -> None:
    _check("fn", PROGRAM.FUNCTIONS)


def test_alter_and_show_as_flink() -> None:
    _check("alter", PROGRAM.ALTER)


def test_insert_overwrite_as_flink(tmp_path: Path) -> None:
    _check("ow", PROGRAM.OVERWRITE, batch=True, root=tmp_path)


def test_insert_overwrite_refused_in_streaming(tmp_path: Path) -> None:
    _check("ows", PROGRAM.OVERWRITE_STREAMING, root=tmp_path)


def test_java_function_refused() -> None:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    with pytest.raises(Exception, match="create_java_temporary_function"):
        t_env.create_java_temporary_function("f", "com.example.F")
