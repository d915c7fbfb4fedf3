"""The queries of ``sql_window_count.py`` on PyFlink 2.3 (Flink's SQL on the JVM); run only by that benchmark when
it is given ``--pyflink`` (``PYFLINK=`` in ``make bench-sql``), with PyFlink's interpreter — never by the tests.

    /work/pyflink-venv/bin/python benchmarks/sql_window_count_pyflink.py --rows 1000000 --queries window_tvf,group

Per query: one warm-up run into a ``blackhole`` table, then the timed run (``execute_sql(INSERT …).wait()``, wall
time: the JVM is already up, the job's submission and start-up are in it), then the same checksum as strom's sink
from the query's final rows in BATCH mode (untimed). Prints one JSON line: ``{query: {"wall_s": …, "checksum": {…}}}``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pyflink.table import EnvironmentSettings, TableEnvironment

# sql_jobs imports strom for its sinks: take only the plain data from it
_SPEC = Path(__file__).resolve().parent / "sql_jobs.py"


def _spec() -> dict[str, object]:
    text = _SPEC.read_text()
    names: dict[str, object] = {}
    start = text.index("USERS = ")
    end = text.index("# ---- the plain loops")
    exec(compile(text[start:end].replace("_EPOCH = dt.datetime(1970, 1, 1)", ""), str(_SPEC), "exec"), names)
    return names


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--queries", default="window_tvf,window_group,group,calc")
    args = ap.parse_args()
    spec = _spec()
    queries: dict[str, str] = spec["QUERIES"]  # type: ignore[assignment]
    folds: dict[str, str] = spec["FOLD"]  # type: ignore[assignment]
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    ddl = str(spec["DDL"]).format(users=spec["USERS"], base=spec["BASE_MS"], last=args.rows - 1)
    # Flink counts a datagen table bounded (as BATCH needs) only with 'number-of-rows'; the rows are the same
    ddl = ddl.replace("'rows-per-second'", f"'number-of-rows' = '{args.rows}', 'rows-per-second'")
    t_env.execute_sql(ddl)
    t_env.get_config().set("table.local-time-zone", "UTC")
    # checksums from BATCH mode (the final table; the same rows for the insert-only queries): collecting a
    # STREAMING changelog of millions of rows through Python takes longer than the job
    batch_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    batch_env.get_config().set("table.local-time-zone", "UTC")
    batch_env.execute_sql(ddl)
    out: dict[str, object] = {}
    for q in [q for q in args.queries.split(",") if q]:
        sql = queries[q]
        cols = "user_id BIGINT, s TIMESTAMP_LTZ(3), n BIGINT" if folds[q] == "window" else "user_id BIGINT, v BIGINT"
        t_env.execute_sql(f"CREATE TEMPORARY TABLE IF NOT EXISTS sink_{q} ({cols}) WITH ('connector' = 'blackhole')")
        t_env.execute_sql(f"INSERT INTO sink_{q} {sql}").wait()  # warm-up
        t0 = time.monotonic()
        t_env.execute_sql(f"INSERT INTO sink_{q} {sql}").wait()
        wall = time.monotonic() - t0
        out[q] = {"wall_s": wall, "checksum": checksum(batch_env, sql, folds[q])}
        print(q, out[q], file=sys.stderr, flush=True)
    print(json.dumps(out))
    return 0


def checksum(t_env: TableEnvironment, sql: str, fold: str) -> dict[str, int]:
    import datetime as dt
    import zlib

    m64 = (1 << 64) - 1
    epoch = dt.datetime(1970, 1, 1)
    table: dict[int, int] = {}
    rows = total = h = 0
    if fold == "rows":  # the fold in SQL: the rows themselves are many
        summary = f"SELECT COUNT(*), SUM(v), SUM(CAST(user_id AS DECIMAL(38, 0)) * v) FROM ({sql})"
        with t_env.execute_sql(summary).collect() as results:
            n, t, weighted = next(iter(results))
        return {"rows": int(n), "total": int(t), "hash": int(weighted) & m64}
    with t_env.execute_sql(sql).collect() as results:
        for row in results:
            kind = row.get_row_kind().name
            if fold == "table":
                if kind in ("UPDATE_BEFORE", "DELETE"):
                    table.pop(row[0], None)
                else:
                    table[row[0]] = row[1]
                continue
            rows += 1
            if fold == "window":
                start = row[1]
                if isinstance(start, dt.datetime):
                    start = (start.replace(tzinfo=None) - epoch) // dt.timedelta(milliseconds=1)
                total += row[2]
                h += zlib.crc32(b"%d|%d|%d" % (row[0], start, row[2]))
            else:
                total += row[1]
                h += row[0] * row[1]
    if fold == "table":
        h = sum(zlib.crc32(b"%d|%d" % (k, v)) for k, v in table.items()) & m64
        return {"keys": len(table), "total": sum(table.values()), "hash": h}
    return {"rows": rows, "total": total, "hash": h & m64}


if __name__ == "__main__":
    sys.exit(main())
