"""The program that produced the ``feat_*.txt`` facts beside it: run in PyFlink 2.3.0 (``python feat_queries.py``).

Statements strom's ``sqlfeat`` part added: CREATE/DROP FUNCTION with Python functions by dotted path
(``feat_udfs.py``), SHOW [USER] FUNCTIONS; ALTER TABLE/VIEW, SHOW CREATE TABLE/VIEW, SHOW COLUMNS, SHOW CURRENT,
DESCRIBE; INSERT OVERWRITE into filesystem tables (BATCH) and its refusals; row-count group windows and
``left_outer_join_lateral`` in the Table API. Each step runs in order on its section's environment (parallelism 1)
and writes ``feat_<section>_<step>.txt``: ``TableResult.print()``'s output, a listing, or an error as its
exception's class and message (a failed job's root cause after it).
"""

import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
FS = "/tmp/strom-flink-feat"
MARK = "#### step "

FUNCTIONS = [
    ("create_temp", "CREATE TEMPORARY FUNCTION add_one AS 'feat_udfs.add_one' LANGUAGE PYTHON"),
    ("select_add_one", "SELECT add_one(x) AS y FROM (VALUES (1), (2)) AS t(x)"),
    ("create_temp_again", "CREATE TEMPORARY FUNCTION add_one AS 'feat_udfs.add_one' LANGUAGE PYTHON"),
    (
        "create_temp_if_not_exists",
        "CREATE TEMPORARY FUNCTION IF NOT EXISTS add_one AS 'feat_udfs.add_one' LANGUAGE PYTHON",
    ),
    ("create_catalog", "CREATE FUNCTION twice AS 'feat_udfs.twice' LANGUAGE PYTHON"),
    ("create_catalog_again", "CREATE FUNCTION twice AS 'feat_udfs.twice' LANGUAGE PYTHON"),
    ("create_system", "CREATE TEMPORARY SYSTEM FUNCTION split_words AS 'feat_udfs.split_words' LANGUAGE PYTHON"),
    ("create_system_again", "CREATE TEMPORARY SYSTEM FUNCTION split_words AS 'feat_udfs.split_words' LANGUAGE PYTHON"),
    ("create_udaf", "CREATE TEMPORARY FUNCTION longest AS 'feat_udfs.longest' LANGUAGE PYTHON"),
    (
        "select_all",
        "SELECT twice(x) AS d, w, n FROM (VALUES (1, 'a bb'), (2, 'ccc')) AS t(x, s), "
        "LATERAL TABLE(split_words(s)) AS u(w, n)",
    ),
    ("select_udaf", "SELECT longest(s) AS m FROM (VALUES ('a'), ('abc'), ('b')) AS t(s)"),
    ("show_user", "SHOW USER FUNCTIONS"),
    ("describe_function", "DESCRIBE FUNCTION add_one"),
    ("describe_function_extended", "DESCRIBE FUNCTION EXTENDED twice"),
    ("describe_function_builtin", "DESCRIBE FUNCTION upper"),
    ("show_user_like", "SHOW USER FUNCTIONS LIKE 'a%'"),
    ("show_user_not_ilike", "SHOW USER FUNCTIONS NOT ILIKE 'A%'"),
    ("show_all", "SHOW FUNCTIONS"),
    ("show_all_like", "SHOW FUNCTIONS LIKE 'tw%'"),
    ("drop_catalog_as_temp", "DROP TEMPORARY FUNCTION twice"),
    ("drop_temp_as_catalog", "DROP FUNCTION add_one"),
    ("drop_temp", "DROP TEMPORARY FUNCTION add_one"),
    ("drop_temp_again", "DROP TEMPORARY FUNCTION add_one"),
    ("drop_temp_if_exists", "DROP TEMPORARY FUNCTION IF EXISTS add_one"),
    ("unknown_function", "SELECT add_one(x) AS y FROM (VALUES (1)) AS t(x)"),
    ("drop_unknown", "DROP FUNCTION nope"),
    ("drop_unknown_if_exists", "DROP FUNCTION IF EXISTS nope"),
    ("drop_catalog", "DROP FUNCTION twice"),
    ("drop_system_as_temp", "DROP TEMPORARY FUNCTION split_words"),
    ("drop_system", "DROP TEMPORARY SYSTEM FUNCTION split_words"),
    ("drop_system_again", "DROP TEMPORARY SYSTEM FUNCTION split_words"),
    ("create_java", "CREATE TEMPORARY FUNCTION jf AS 'feat_udfs.add_one'"),
    ("create_bad_path", "CREATE TEMPORARY FUNCTION bad AS 'feat_udfs.nope' LANGUAGE PYTHON"),
    ("select_bad_path", "SELECT bad(1)"),
    ("create_bad_module", "CREATE TEMPORARY FUNCTION bad2 AS 'no_such_module.f' LANGUAGE PYTHON"),
    ("show_user_end", "SHOW USER FUNCTIONS"),
]

ALTER = [
    (
        "create",
        "CREATE TABLE t (a INT NOT NULL, b STRING COMMENT 'the b', ts TIMESTAMP(3), c AS a + 1, "
        "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND, PRIMARY KEY (a) NOT ENFORCED) COMMENT 'a table' "
        "WITH ('connector' = 'datagen', 'number-of-rows' = '3')",
    ),
    ("show_create", "SHOW CREATE TABLE t"),
    ("describe", "DESCRIBE t"),
    ("desc", "DESC t"),
    ("describe_extended", "DESCRIBE EXTENDED t"),
    ("show_columns", "SHOW COLUMNS FROM t"),
    ("show_columns_like", "SHOW COLUMNS FROM t LIKE '%s'"),
    ("show_columns_not_like", "SHOW COLUMNS IN t NOT LIKE 'a%'"),
    ("show_columns_ilike", "SHOW COLUMNS FROM t ILIKE 'B'"),
    ("show_current_catalog", "SHOW CURRENT CATALOG"),
    ("show_current_database", "SHOW CURRENT DATABASE"),
    ("describe_catalog", "DESCRIBE CATALOG default_catalog"),
    ("describe_catalog_extended", "DESCRIBE CATALOG EXTENDED default_catalog"),
    ("describe_database", "DESCRIBE DATABASE default_database"),
    ("show_create_catalog", "SHOW CREATE CATALOG default_catalog"),
    ("rename", "ALTER TABLE t RENAME TO u"),
    ("show_tables", "SHOW TABLES"),
    ("rename_missing", "ALTER TABLE t RENAME TO x"),
    ("rename_if_exists", "ALTER TABLE IF EXISTS t RENAME TO x"),
    ("set", "ALTER TABLE u SET ('number-of-rows' = '5', 'fields.b.length' = '4')"),
    ("show_create_set", "SHOW CREATE TABLE u"),
    ("reset", "ALTER TABLE u RESET ('fields.b.length')"),
    ("show_create_reset", "SHOW CREATE TABLE u"),
    ("reset_connector", "ALTER TABLE u RESET ('connector')"),
    ("add", "ALTER TABLE u ADD d DOUBLE COMMENT 'dd'"),
    ("add_many", "ALTER TABLE u ADD (e INT FIRST, f AS a * 2 AFTER b)"),
    ("show_create_add", "SHOW CREATE TABLE u"),
    ("add_existing", "ALTER TABLE u ADD a BIGINT"),
    ("modify", "ALTER TABLE u MODIFY b VARCHAR(10)"),
    ("modify_move", "ALTER TABLE u MODIFY d DOUBLE FIRST"),
    ("show_create_modify", "SHOW CREATE TABLE u"),
    ("modify_missing", "ALTER TABLE u MODIFY zz INT"),
    ("drop", "ALTER TABLE u DROP d"),
    ("drop_many", "ALTER TABLE u DROP (e, f)"),
    ("show_create_drop", "SHOW CREATE TABLE u"),
    ("drop_referenced", "ALTER TABLE u DROP a"),
    ("drop_missing", "ALTER TABLE u DROP zz"),
    ("drop_watermark", "ALTER TABLE u DROP WATERMARK"),
    ("drop_primary_key", "ALTER TABLE u DROP PRIMARY KEY"),
    ("add_watermark", "ALTER TABLE u ADD WATERMARK FOR ts AS ts"),
    ("add_primary_key", "ALTER TABLE u ADD PRIMARY KEY (a) NOT ENFORCED"),
    ("modify_watermark", "ALTER TABLE u MODIFY WATERMARK FOR ts AS ts - INTERVAL '2' SECOND"),
    ("show_create_constraints", "SHOW CREATE TABLE u"),
    ("describe_after", "DESCRIBE u"),
    ("create_view", "CREATE VIEW v AS SELECT a, b FROM u WHERE a > 1"),
    ("show_create_view", "SHOW CREATE VIEW v"),
    ("show_create_table_of_view", "SHOW CREATE TABLE v"),
    ("show_create_view_of_table", "SHOW CREATE VIEW u"),
    ("rename_view", "ALTER VIEW v RENAME TO w"),
    ("show_views", "SHOW VIEWS"),
    ("alter_view_as", "ALTER VIEW w AS SELECT a FROM u"),
    ("show_create_view_altered", "SHOW CREATE VIEW w"),
    ("describe_view", "DESCRIBE w"),
    ("alter_table_on_view", "ALTER TABLE w RENAME TO w2"),
    ("alter_view_on_table", "ALTER VIEW u RENAME TO u2"),
    ("create_temp_table", "CREATE TEMPORARY TABLE tt (a INT) WITH ('connector' = 'datagen')"),
    ("rename_temp", "ALTER TABLE tt RENAME TO tt2"),
    ("set_temp", "ALTER TABLE tt SET ('number-of-rows' = '1')"),
    ("show_create_temp", "SHOW CREATE TABLE tt"),
    ("create_temp_view", "CREATE TEMPORARY VIEW tv AS SELECT a FROM tt"),
    ("show_create_temp_view", "SHOW CREATE VIEW tv"),
    ("rename_temp_view", "ALTER VIEW tv RENAME TO tv2"),
    (
        "create_fs",
        "CREATE TABLE p (a INT, b STRING, dt STRING) PARTITIONED BY (dt) WITH ("
        "'connector' = 'filesystem', 'path' = '/tmp/strom-flink-feat/p', 'format' = 'csv')",
    ),
    ("show_create_partitioned", "SHOW CREATE TABLE p"),
    ("drop_partition_column", "ALTER TABLE p DROP dt"),
    ("show_missing", "SHOW CREATE TABLE nope"),
    ("show_columns_missing", "SHOW COLUMNS FROM nope"),
]

OVERWRITE = [
    (
        "create",
        f"CREATE TABLE ow (a INT, b STRING) WITH ('connector' = 'filesystem', 'path' = '{FS}/ow', 'format' = 'csv')",
    ),
    ("insert", "INSERT INTO ow VALUES (1, 'a'), (2, 'b')"),
    ("insert_again", "INSERT INTO ow VALUES (3, 'c')"),
    ("select_before", "SELECT * FROM ow"),
    ("overwrite", "INSERT OVERWRITE ow VALUES (4, 'd')"),
    ("select_after", "SELECT * FROM ow"),
    ("files_after", f"ls {FS}/ow"),
    ("overwrite_empty", "INSERT OVERWRITE ow SELECT * FROM ow WHERE a < 0"),
    ("select_after_empty", "SELECT * FROM ow"),
    (
        "create_p",
        f"CREATE TABLE pw (a INT, b STRING, dt STRING) PARTITIONED BY (dt) WITH ("
        f"'connector' = 'filesystem', 'path' = '{FS}/pw', 'format' = 'csv')",
    ),
    ("insert_p", "INSERT INTO pw VALUES (1, 'a', 'x'), (2, 'b', 'y'), (3, 'c', 'z')"),
    ("overwrite_static", "INSERT OVERWRITE pw PARTITION (dt = 'x') VALUES (9, 'q')"),
    ("select_static", "SELECT * FROM pw"),
    ("overwrite_dynamic", "INSERT OVERWRITE pw SELECT * FROM (VALUES (5, 'e', 'y'), (6, 'f', 'w')) AS t(a, b, dt)"),
    ("select_dynamic", "SELECT * FROM pw"),
    ("files_dynamic", f"ls {FS}/pw"),
    ("overwrite_static_empty", "INSERT OVERWRITE pw PARTITION (dt = 'z') SELECT a, b FROM pw WHERE a < 0"),
    ("select_static_empty", "SELECT * FROM pw"),
    ("insert_static", "INSERT INTO pw PARTITION (dt = 'x') VALUES (10, 'r')"),
    ("select_insert_static", "SELECT * FROM pw"),
    ("create_print", "CREATE TABLE pr (a INT, b STRING) WITH ('connector' = 'print')"),
    ("overwrite_print", "INSERT OVERWRITE pr VALUES (1, 'a')"),
    ("create_blackhole", "CREATE TABLE bh (a INT, b STRING) WITH ('connector' = 'blackhole')"),
    ("overwrite_blackhole", "INSERT OVERWRITE bh VALUES (1, 'a')"),
    ("overwrite_unknown_partition", "INSERT OVERWRITE pw PARTITION (nope = 'x') VALUES (1, 'a')"),
]

OVERWRITE_STREAMING = [
    (
        "create",
        f"CREATE TABLE ow (a INT, b STRING) WITH ('connector' = 'filesystem', 'path' = '{FS}/ows', 'format' = 'csv')",
    ),
    ("overwrite", "INSERT OVERWRITE ow VALUES (4, 'd')"),
]

ROWS_CSV = "/tmp/strom-flink-feat-rows.csv"
ROWS = [
    ("a", 1, "2024-01-01 00:00:01"),
    ("b", 2, "2024-01-01 00:00:02"),
    ("a", 3, "2024-01-01 00:00:03"),
    ("a", 4, "2024-01-01 00:00:04"),
    ("b", 5, "2024-01-01 00:00:05"),
    ("a", 6, "2024-01-01 00:00:06"),
    ("b", 7, "2024-01-01 00:00:07"),
]
ROWS_TABLE = (
    f"CREATE TABLE rw (k STRING, v INT, ts TIMESTAMP(3), pt AS PROCTIME(), WATERMARK FOR ts AS ts) WITH ("
    f"'connector' = 'filesystem', 'path' = '{ROWS_CSV}', 'format' = 'csv')"
)


def table_steps(t_env):
    from pyflink.table import DataTypes
    from pyflink.table.expressions import col, row_interval
    from pyflink.table.udf import udtf
    from pyflink.table.window import Slide, Tumble

    t_env.execute_sql(ROWS_TABLE)
    rw = t_env.from_path("rw")

    @udtf(result_types=[DataTypes.STRING(), DataTypes.INT()])
    def words(s):
        if s:
            for w in s.split(" "):
                yield w, len(w)

    t = t_env.from_elements([(1, "a bb"), (2, ""), (3, None), (4, "ccc")], ["id", "s"])
    return [
        (
            "tumble_rows",
            lambda: (
                rw.window(Tumble.over(row_interval(2)).on(col("pt")).alias("w"))
                .group_by(col("w"), col("k"))
                .select(col("k"), col("v").sum.alias("s"))
            ),
        ),
        (
            "tumble_rows_global",
            lambda: (
                rw.window(Tumble.over(row_interval(3)).on(col("pt")).alias("w"))
                .group_by(col("w"))
                .select(col("v").sum.alias("s"), col("v").count.alias("n"))
            ),
        ),
        (
            "slide_rows",
            lambda: (
                rw.window(Slide.over(row_interval(3)).every(row_interval(2)).on(col("pt")).alias("w"))
                .group_by(col("w"), col("k"))
                .select(col("k"), col("v").sum.alias("s"))
            ),
        ),
        (
            "slide_rows_global",
            lambda: (
                rw.window(Slide.over(row_interval(2)).every(row_interval(1)).on(col("pt")).alias("w"))
                .group_by(col("w"))
                .select(col("v").sum.alias("s"))
            ),
        ),
        (
            "tumble_rows_rowtime",
            lambda: (
                rw.window(Tumble.over(row_interval(2)).on(col("ts")).alias("w"))
                .group_by(col("w"), col("k"))
                .select(col("k"), col("v").sum.alias("s"))
            ),
        ),
        (
            "slide_rows_start",
            lambda: (
                rw.window(Slide.over(row_interval(3)).every(row_interval(2)).on(col("pt")).alias("w"))
                .group_by(col("w"), col("k"))
                .select(col("k"), col("w").end)
            ),
        ),
        (
            "tumble_rows_start",
            lambda: (
                rw.window(Tumble.over(row_interval(2)).on(col("pt")).alias("w"))
                .group_by(col("w"), col("k"))
                .select(col("k"), col("w").start)
            ),
        ),
        (
            "explain_tumble_rows",
            lambda: (
                rw.window(Tumble.over(row_interval(2)).on(col("pt")).alias("w"))
                .group_by(col("w"), col("k"))
                .select(col("k"), col("v").sum.alias("s"))
            ),
        ),
        (
            "left_lateral",
            lambda: t.left_outer_join_lateral(words(col("s")).alias("w", "n")).select(col("id"), col("w"), col("n")),
        ),
        ("left_lateral_row", lambda: t.left_outer_join_lateral(words(col("s"))).select(col("*"))),
        (
            "left_lateral_predicate",
            lambda: t.left_outer_join_lateral(words(col("s")).alias("w", "n"), col("n") > 1).select(
                col("id"), col("w")
            ),
        ),
        (
            "left_lateral_true",
            lambda: t.left_outer_join_lateral(words(col("s")).alias("w", "n"), col("n") == col("n")).select(
                col("id"), col("w")
            ),
        ),
        (
            "join_lateral_predicate",
            lambda: t.join_lateral(words(col("s")).alias("w", "n"), col("n") > 1).select(col("id"), col("w")),
        ),
    ]


def table_batch_steps(t_env):
    from pyflink.table.expressions import col, row_interval
    from pyflink.table.window import Slide, Tumble

    t_env.execute_sql(ROWS_TABLE)
    rw = t_env.from_path("rw")
    return [
        (
            "slide_rows_batch_pt",
            lambda: (
                rw.window(Slide.over(row_interval(3)).every(row_interval(2)).on(col("pt")).alias("w"))
                .group_by(col("w"), col("k"))
                .select(col("k"), col("v").sum.alias("s"))
            ),
        ),
        (
            "tumble_rows_batch_pt",
            lambda: (
                rw.window(Tumble.over(row_interval(2)).on(col("pt")).alias("w"))
                .group_by(col("w"), col("k"))
                .select(col("k"), col("v").sum.alias("s"))
            ),
        ),
        (
            "tumble_rows_batch_ts",
            lambda: (
                rw.window(Tumble.over(row_interval(2)).on(col("ts")).alias("w"))
                .group_by(col("w"), col("k"))
                .select(col("k"), col("v").sum.alias("s"))
            ),
        ),
    ]


def report(exc):
    lines = str(exc).splitlines()
    java = [line.lstrip(": ") for line in lines if "Exception:" in line and not line.startswith(("Caused by:", "\t"))]
    causes = [line for line in lines if line.startswith("Caused by:")]
    first = java[0] if java else lines[0]
    print(first, flush=True)
    at = next(i for i, line in enumerate(lines) if line.endswith(first))
    following = lines[at + 1 : at + 2]
    if following and following[0].strip() and not following[0].startswith(("\t", "Caused by:")):
        print(following[0], flush=True)  # a multi-line message's second line (ALTER TABLE's reason)
    for cause in causes[-2:]:  # a failed job's or statement's root causes
        print(cause, flush=True)


def run_sql(prefix, steps, batch):
    from pyflink.table import EnvironmentSettings, TableEnvironment

    t_env = TableEnvironment.create(
        EnvironmentSettings.in_batch_mode() if batch else EnvironmentSettings.in_streaming_mode()
    )
    t_env.get_config().set("parallelism.default", "1")
    t_env.get_config().set("python.files", os.path.join(HERE, "feat_udfs.py"))
    for name, statement in steps:
        print(MARK + prefix + name, flush=True)
        try:
            if statement.startswith("ls "):
                root = statement[3:]
                for base, dirs, files in sorted(os.walk(root)):
                    dirs.sort()
                    for f in sorted(files):
                        rel = os.path.relpath(os.path.join(base, f), root)
                        hidden = any(p.startswith((".", "_")) for p in rel.split(os.sep))
                        with open(os.path.join(base, f)) as fh:
                            body = fh.read() if not hidden else ""
                        print(f"{'<hidden> ' if hidden else ''}{os.path.dirname(rel)} {body!r}", flush=True)
                continue
            result = t_env.execute_sql(statement)
            if statement.startswith("INSERT"):
                result.wait()
                print("done", flush=True)
            else:
                result.print()
        except Exception as exc:
            report(exc)


def run_table(prefix, batch):
    from pyflink.table import EnvironmentSettings, TableEnvironment

    t_env = TableEnvironment.create(
        EnvironmentSettings.in_batch_mode() if batch else EnvironmentSettings.in_streaming_mode()
    )
    t_env.get_config().set("parallelism.default", "1")
    for name, build in (table_batch_steps if batch else table_steps)(t_env):
        print(MARK + prefix + name, flush=True)
        try:
            table = build()
            if name.startswith("explain_"):
                print(table.explain(), flush=True)
            else:
                table.execute().print()
        except Exception as exc:
            report(exc)


def child(only):
    shutil.rmtree(FS, ignore_errors=True)
    with open(ROWS_CSV, "w") as f:
        f.writelines(",".join(str(v) for v in row) + "\n" for row in ROWS)
    sections = {
        "fn": lambda: run_sql("fn_", FUNCTIONS, False),
        "alter": lambda: run_sql("alter_", ALTER, False),
        "ow": lambda: run_sql("ow_", OVERWRITE, True),
        "ows": lambda: run_sql("ows_", OVERWRITE_STREAMING, False),
        "tab": lambda: run_table("tab_", False),
        "tabb": lambda: run_table("tab_", True),
    }
    for name, run in sections.items():
        if not only or name in only:
            run()
    print(MARK + "end", flush=True)


def main():
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2:])
        return
    from fact_programs import write_facts  # beside this program (the tests import it without that path)

    write_facts(__file__, sys.argv[1:], "feat_", MARK)


if __name__ == "__main__":
    main()
