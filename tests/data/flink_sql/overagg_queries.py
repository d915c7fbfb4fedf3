"""The program that produced the ``overagg_*.txt`` facts beside it: run in PyFlink 2.3.0
(``python overagg_queries.py``).

OVER aggregation with LAG / LEAD, COLLECT (MULTISET results) in GROUP BY and windows, a streaming Top-N ordered
``DESC NULLS FIRST``, and Flink's reserved words as column aliases (which its parser refuses). Each query's
``TableResult.print()`` output goes to ``overagg_<name>.txt`` at parallelism 1: in STREAMING, and in BATCH for the
names starting with ``batch_`` (the query of the name without the prefix). An error is written as its exception's
class and message (a failed job's root cause after it). NULL cells are ``null`` in the csv file. The
``alias_<word>`` queries go to one file, ``overagg_reserved_aliases.txt``: each word with Flink's parse error or
``accepted``.
"""

import os
import subprocess
import sys

from pyflink.table import EnvironmentSettings, TableEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))
G_CSV = "/tmp/strom-flink-overagg-g.csv"
G_ROWS = [
    ("a", 1, "x", "2024-01-01 00:00:01"),
    ("b", 2, "y", "2024-01-01 00:00:02"),
    ("a", 3, "z", "2024-01-01 00:00:04"),
    ("null", 4, "w", "2024-01-01 00:00:05"),
    ("b", "null", "null", "2024-01-01 00:00:07"),
    ("a", 5, "x", "2024-01-01 00:00:12"),
    ("c", 6, "y", "2024-01-01 00:00:13"),
    ("a", 7, "x", "2024-01-01 00:00:14"),
]

SETUP = [
    f"CREATE TABLE g (k STRING, v INT, name STRING, ts TIMESTAMP(3), "
    f"WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ("
    f"'connector' = 'filesystem', 'path' = '{G_CSV}', 'format' = 'csv', 'csv.null-literal' = 'null')",
]

RESERVED = [
    "cube",
    "rollup",
    "prev",
    "next",
    "value",
    "user",
    "year",
    "month",
    "day",
    "hour",
    "minute",
    "second",
    "time",
    "date",
    "timestamp",
    "interval",
    "current",
    "first",
    "last",
    "rank",
    "row",
    "rows",
    "position",
    "end",
    "start",
    "result",
    "language",
    "system",
    "window",
    "match",
    "range",
    "count",
    "sum",
    "min",
    "max",
    "avg",
    "abs",
    "lower",
    "upper",
    "key",
    "data",
    "name",
    "comment",
    "type",
    "offset",
    "limit",
    "order",
    "partition",
    "over",
    "session",
    "left",
    "right",
    "all",
    "any",
    "some",
    "values",
    "table",
    "union",
    "select",
    "from",
    "where",
    "group",
    "having",
    "by",
    "as",
    "on",
    "in",
    "is",
    "not",
    "null",
    "true",
    "false",
    "and",
    "or",
    "case",
    "when",
    "then",
    "else",
    "cast",
    "element",
    "member",
    "collect",
    "sql",
    "nullif",
    "coalesce",
    "filter",
    "grouping",
    "sets",
    "escape",
    "percent",
    "lag",
    "lead",
    "ntile",
    "mod",
    "power",
    "floor",
    "ceil",
    "ceiling",
    "local",
    "global",
    "method",
    "module",
    "new",
    "old",
    "none",
    "open",
    "close",
    "language",
    "level",
    "path",
    "role",
    "schema",
    "scope",
    "size",
    "state",
    "temporary",
    "zone",
    "exists",
    "unique",
    "uescape",
    "trim",
    "character",
    "char",
    "varchar",
    "int",
    "integer",
    "bigint",
    "double",
    "float",
    "real",
    "decimal",
    "boolean",
    "string",
    "bytes",
    "array",
    "map",
    "multiset",
    "raw",
    "descriptor",
    "hop",
    "tumble",
    "cumulate",
    "pattern",
    "define",
    "measures",
    "within",
    "period",
    "absolute",
    "action",
    "at",
    "both",
    "call",
    "cursor",
    "default",
    "deref",
    "desc",
    "asc",
    "every",
    "external",
    "fetch",
    "following",
    "preceding",
    "free",
    "function",
    "hold",
    "identity",
    "import",
    "inner",
    "outer",
    "cross",
    "full",
    "join",
    "natural",
    "using",
    "lateral",
    "like",
    "localtime",
    "localtimestamp",
    "current_date",
    "current_time",
    "current_timestamp",
    "current_user",
    "session_user",
    "system_user",
    "more",
    "nchar",
    "only",
    "parameter",
    "precision",
    "primary",
    "references",
    "returns",
    "revoke",
    "savepoint",
    "scroll",
    "search",
    "sensitive",
    "similar",
    "specific",
    "statement",
    "submultiset",
    "substring",
    "symmetric",
    "translate",
    "treat",
    "trigger",
    "truncate",
    "unknown",
    "upsert",
    "var_pop",
    "versioning",
    "width_bucket",
    "without",
    "json_value",
    "json_object",
    "classifier",
    "running",
    "final",
    "skip",
    "seek",
    "contains",
    "equals",
    "overlaps",
    "succeeds",
    "precedes",
    "immediately",
    "occurrences_regex",
    "ltrim",
    "rtrim",
    "ifnull",
    "tinyint",
    "smallint",
    "bit",
    "binary",
    "varbinary",
    "bytes",
    "dec",
    "numeric",
    "ln",
]
RESERVED = list(dict.fromkeys(RESERVED))

QUERIES = {
    "lag_basic": "SELECT k, v, LAG(v) OVER (PARTITION BY k ORDER BY ts) AS lv FROM g",
    "lag_offset_default": "SELECT k, v, LAG(v, 2, -1) OVER (PARTITION BY k ORDER BY ts) AS lv2, "
    "LAG(name, 1, 'none') OVER (PARTITION BY k ORDER BY ts) AS lname FROM g",
    "lag_with_sum": "SELECT k, v, LAG(v) OVER w AS lv, SUM(v) OVER w AS sv FROM g "
    "WINDOW w AS (PARTITION BY k ORDER BY ts)",
    "lag_rows_frame": "SELECT k, v, LAG(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING "
    "AND CURRENT ROW) AS lv FROM g",
    "lag_no_partition": "SELECT k, v, LAG(v) OVER (ORDER BY ts) AS lv FROM g",
    "lag_group_by": "SELECT k, LAG(v) AS lv FROM g GROUP BY k",
    "lead_basic": "SELECT k, v, LEAD(v) OVER (PARTITION BY k ORDER BY ts) AS nv FROM g",
    "lead_offset_default": "SELECT k, v, LEAD(v, 1, -1) OVER (PARTITION BY k ORDER BY ts) AS nv FROM g",
    "collect_group": "SELECT k, COLLECT(v) AS cl FROM g WHERE k IS NOT NULL GROUP BY k",
    "collect_strings": "SELECT k, COLLECT(name) AS names FROM g GROUP BY k",
    "collect_window": "SELECT window_start, window_end, COLLECT(k) AS ks FROM TABLE(TUMBLE(TABLE g, DESCRIPTOR(ts), "
    "INTERVAL '5' SECOND)) GROUP BY window_start, window_end",
    "collect_distinct": "SELECT COLLECT(DISTINCT k) AS ks, COUNT(*) AS c FROM g",
    "topn_nulls_first": "SELECT k, v FROM g ORDER BY v DESC NULLS FIRST LIMIT 3",
    "topn_nulls_first_offset": "SELECT k, v FROM g ORDER BY v DESC NULLS FIRST LIMIT 3 OFFSET 1",
    "topn_asc_nulls_last": "SELECT k, v FROM g ORDER BY v ASC NULLS LAST LIMIT 2",
    "rownum_nulls_first": "SELECT k, v, rn FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC "
    "NULLS FIRST) AS rn FROM g) WHERE rn <= 2",
}
for word in RESERVED:
    QUERIES["alias_" + word] = f"SELECT v AS {word} FROM g WHERE v = 1"

BATCH = [
    "lag_basic",
    "lag_offset_default",
    "lag_with_sum",
    "lag_no_partition",
    "lead_basic",
    "lead_offset_default",
    "collect_group",
    "collect_strings",
    "collect_window",
    "collect_distinct",
    "topn_nulls_first",
    "topn_nulls_first_offset",
]

MARK = "#### query "


def write_files() -> None:
    with open(G_CSV, "w") as f:
        f.writelines(",".join(str(v) for v in row) + "\n" for row in G_ROWS)


def environment(settings: EnvironmentSettings) -> TableEnvironment:
    t_env = TableEnvironment.create(settings)
    t_env.get_config().set("parallelism.default", "1")
    t_env.get_config().set("table.local-time-zone", "UTC")
    for statement in SETUP:
        t_env.execute_sql(statement)
    return t_env


def run_queries(only: list[str]) -> None:
    streaming = environment(EnvironmentSettings.in_streaming_mode())
    batch = environment(EnvironmentSettings.in_batch_mode())
    for name in [*QUERIES, *("batch_" + n for n in BATCH)]:
        if only and name not in only:
            continue
        print(MARK + name, flush=True)
        t_env = batch if name.startswith("batch_") else streaming
        try:
            t_env.execute_sql(QUERIES[name.removeprefix("batch_")]).print()
        except Exception as exc:  # the error is the fact
            lines = str(exc).splitlines()
            java = [line for line in lines if "org.apache.flink" in line and "Exception:" in line]
            causes = [line for line in lines if line.startswith("Caused by:")]
            print((java[0].lstrip(": ") if java else lines[0]), flush=True)
            if causes:  # a failed job: its root cause
                print(causes[-1], flush=True)
    print(MARK + "end", flush=True)


def main() -> None:
    write_files()
    if sys.argv[1:2] == ["--child"]:
        run_queries(sys.argv[2:])
        return
    done = subprocess.run([sys.executable, __file__, "--child", *sys.argv[1:]], capture_output=True, text=True)
    name = None
    chunks: dict[str, list[str]] = {}
    for line in done.stdout.splitlines():
        if line.startswith(MARK):
            name = line[len(MARK) :]
            chunks[name] = []
        elif name is not None:
            chunks[name].append(line)
    aliases = []  # one file: each word with Flink's parse error, or "accepted"
    for name, lines in chunks.items():
        if name.startswith("alias_"):
            refused = lines and "Exception" in lines[0]
            aliases.append(f"{name.removeprefix('alias_')}: {lines[0] if refused else 'accepted'}")
        elif name != "end":
            with open(os.path.join(HERE, f"overagg_{name}.txt"), "w") as f:
                f.write("\n".join(lines) + "\n")
    with open(os.path.join(HERE, "overagg_reserved_aliases.txt"), "w") as f:
        f.write("\n".join(aliases) + "\n")
    sys.stderr.write(done.stderr[-3000:])


if __name__ == "__main__":
    main()
