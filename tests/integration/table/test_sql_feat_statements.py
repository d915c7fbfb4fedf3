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
from typing import Any

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
    "ow_overwrite_unknown_partition": "strom's position form: 'at line 1, column 32: Unknown target column'",
    "fn_describe_function_builtin": "Flink 2.3 does not parse a built-in's name; strom: no such user function",
    "alter_describe_database": "Flink 2.3 reads DESCRIBE DATABASE d as a query; strom refuses the statement",
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
        reasons = [line for line in expected.splitlines()[1:] if not line.startswith("Caused by:")]
        return got.startswith(_CLASSES.get(name, name)) and all(m in got for m in [message, *reasons])
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


def _printed(table: object) -> str:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        table.execute().print()  # type: ignore[attr-defined]
    return buffer.getvalue()


def test_left_outer_join_lateral_as_flink() -> None:
    from strom.table import DataTypes
    from strom.table.expressions import col
    from strom.table.udf import udtf

    @udtf(result_types=[DataTypes.STRING(), DataTypes.INT()])
    def words(s: str | None):  # type: ignore[no-untyped-def]
        if s:
            for w in s.split(" "):
                yield w, len(w)

    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    t = t_env.from_elements([(1, "a bb"), (2, ""), (3, None), (4, "ccc")], ["id", "s"])
    joined = t.left_outer_join_lateral(words(col("s")).alias("w", "n")).select(col("id"), col("w"), col("n"))
    assert _printed(joined) == (FACTS / "feat_tab_left_lateral.txt").read_text()
    whole = t.left_outer_join_lateral(words(col("s"))).select(col("*"))
    assert _printed(whole) == (FACTS / "feat_tab_left_lateral_row.txt").read_text()
    message = (FACTS / "feat_tab_left_lateral_predicate.txt").read_text().splitlines()[0].partition(": ")[2]
    for predicate in (col("n") > 1, col("n") == col("n")):
        with pytest.raises(Exception, match=message.replace(".", r"\.")):
            t.left_outer_join_lateral(words(col("s")).alias("w", "n"), predicate)


def _rows_table(batch: bool) -> object:
    with open(PROGRAM.ROWS_CSV, "w") as f:
        f.writelines(",".join(str(v) for v in row) + "\n" for row in PROGRAM.ROWS)
    settings = EnvironmentSettings.in_batch_mode() if batch else EnvironmentSettings.in_streaming_mode()
    t_env = TableEnvironment.create(settings)
    t_env.get_config().set("parallelism.default", "1")
    t_env.execute_sql(PROGRAM.ROWS_TABLE)
    return t_env.from_path("rw")


def _flink_message(name: str) -> str:
    return (FACTS / f"feat_tab_{name}.txt").read_text().splitlines()[0].partition(": ")[2]


def test_row_count_windows_as_flink() -> None:
    from strom.table.expressions import col, row_interval
    from strom.table.window import Slide, Tumble

    rw: Any = _rows_table(batch=False)
    k, v, pt = col("k"), col("v"), col("pt")
    tables = {
        "tumble_rows": rw.window(Tumble.over(row_interval(2)).on(pt).alias("w"))
        .group_by(col("w"), k)
        .select(k, v.sum.alias("s")),
        "tumble_rows_global": rw.window(Tumble.over(row_interval(3)).on(pt).alias("w"))
        .group_by(col("w"))
        .select(v.sum.alias("s"), v.count.alias("n")),
        "slide_rows": rw.window(Slide.over(row_interval(3)).every(row_interval(2)).on(pt).alias("w"))
        .group_by(col("w"), k)
        .select(k, v.sum.alias("s")),
        "slide_rows_global": rw.window(Slide.over(row_interval(2)).every(row_interval(1)).on(pt).alias("w"))
        .group_by(col("w"))
        .select(v.sum.alias("s")),
    }
    for name, table in tables.items():
        assert _printed(table) == (FACTS / f"feat_tab_{name}.txt").read_text(), name
    with pytest.raises(Exception, match=_flink_message("tumble_rows_rowtime")):
        rw.window(Tumble.over(row_interval(2)).on(col("ts")).alias("w")).group_by(col("w"), k).select(k, v.sum)
    with pytest.raises(Exception, match=_flink_message("tumble_rows_start")):
        rw.window(Tumble.over(row_interval(2)).on(pt).alias("w")).group_by(col("w"), k).select(k, col("w").start)
    with pytest.raises(Exception, match=_flink_message("slide_rows_start")):
        rw.window(Slide.over(row_interval(3)).every(row_interval(2)).on(pt).alias("w")).group_by(col("w"), k).select(
            k, col("w").end
        )
    batch: Any = _rows_table(batch=True)
    for name, on in (("tumble_rows_batch_pt", "pt"), ("tumble_rows_batch_ts", "ts")):
        with pytest.raises(Exception, match=_flink_message(name)) as refused:
            batch.window(Tumble.over(row_interval(2)).on(col(on)).alias("w")).group_by(col("w"), k).select(k, v.sum)
        assert f"Window TumblingGroupWindow('w, {on}, 2) is not supported right now." in str(refused.value)
    with pytest.raises(Exception, match=_flink_message("slide_rows_batch_pt")) as refused:
        batch.window(Slide.over(row_interval(3)).every(row_interval(2)).on(pt).alias("w")).group_by(col("w"), k).select(
            k, v.sum
        )
    assert "Window SlidingGroupWindow('w, pt, 3, 2) is not supported right now." in str(refused.value)


def test_show_create_view_of_a_join_prints_the_query_as_written() -> None:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.execute_sql("CREATE TABLE a (k INT, x STRING) WITH ('connector' = 'datagen')")
    t_env.execute_sql("CREATE TABLE b (k INT, y STRING) WITH ('connector' = 'datagen')")
    t_env.execute_sql("CREATE VIEW j AS SELECT a.k, y FROM a JOIN b ON a.k = b.k")
    text = next(iter(t_env.execute_sql("SHOW CREATE VIEW j").collect()))[0]
    assert text.startswith("CREATE VIEW `default_catalog`.`default_database`.`j` (\n  `k`,\n  `y`\n)\nAS SELECT")
    assert "JOIN `b`" in text and "ON `a`.`k` = `b`.`k`" in text
