"""The program that produced the ``gw_*.txt`` facts beside it: Flink 2.3's results of the legacy SQL group window
functions (``GROUP BY TUMBLE(ts, size)`` / ``HOP(ts, slide, size)`` / ``SESSION(ts, gap)`` with ``TUMBLE_START`` …
in SELECT and HAVING). Run with PyFlink 2.3.0 (never imported by the tests): ``python gw_queries.py [name ...]``
writes ``gw_<name>.txt`` (STREAMING, parallelism 1) and ``gw_batch_<name>.txt`` (BATCH) for the names in
``BATCH``, one JSON line per result row ``{"kind": "+I", "values": [...]}`` (timestamps as ``str(datetime)``) after
a ``-- query`` line; a query Flink refuses writes ``-- query`` and ``!! <exception>: <first line>``.
Input: ``gw_bids.csv`` (user, amount, ts; watermark ``ts - 5 s``: no record is late).
"""

from __future__ import annotations

import datetime
import decimal
import json
import os
import sys

from pyflink.table import EnvironmentSettings, TableEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))
T10 = "INTERVAL '10' SECOND"
H = "INTERVAL '5' SECOND, INTERVAL '10' SECOND"
S5 = "INTERVAL '5' SECOND"

QUERIES: dict[str, str] = {
    "tumble": f"SELECT `user`, TUMBLE_START(ts, {T10}) AS w, COUNT(*) AS cnt FROM bids "
    f"GROUP BY TUMBLE(ts, {T10}), `user`",
    "tumble_props": f"SELECT TUMBLE_START(ts, {T10}) AS s, TUMBLE_END(ts, {T10}) AS e, "
    f"TUMBLE_ROWTIME(ts, {T10}) AS rt, `user`, SUM(amount) AS total, MAX(amount) AS mx FROM bids "
    f"GROUP BY `user`, TUMBLE(ts, {T10})",
    "tumble_no_window_in_select": f"SELECT `user`, COUNT(*) AS cnt FROM bids GROUP BY TUMBLE(ts, {T10}), `user`",
    "tumble_global": f"SELECT TUMBLE_END(ts, {T10}) AS e, COUNT(*) AS cnt, SUM(amount) AS total FROM bids "
    f"GROUP BY TUMBLE(ts, {T10})",
    "tumble_having_where": f"SELECT `user`, TUMBLE_START(ts, {T10}) AS s, SUM(amount) AS total FROM bids "
    f"WHERE amount > 1 GROUP BY TUMBLE(ts, {T10}), `user` HAVING COUNT(*) > 1",
    "tumble_start_expr": f"SELECT `user`, CAST(TUMBLE_START(ts, {T10}) AS STRING) AS s, "
    f"TUMBLE_END(ts, {T10}) - INTERVAL '1' SECOND AS e1, COUNT(*) + 1 AS c1 FROM bids "
    f"GROUP BY TUMBLE(ts, {T10}), `user`",
    "hop": f"SELECT `user`, HOP_START(ts, {H}) AS s, HOP_END(ts, {H}) AS e, COUNT(*) AS cnt, "
    f"SUM(amount) AS total FROM bids GROUP BY HOP(ts, {H}), `user`",
    "hop_having": f"SELECT HOP_START(ts, {H}) AS s, HOP_ROWTIME(ts, {H}) AS rt, COUNT(*) AS cnt FROM bids "
    f"GROUP BY HOP(ts, {H}) HAVING SUM(amount) > 10",
    "session": f"SELECT `user`, SESSION_START(ts, {S5}) AS s, SESSION_END(ts, {S5}) AS e, "
    f"SESSION_ROWTIME(ts, {S5}) AS rt, COUNT(*) AS cnt, SUM(amount) AS total FROM bids "
    f"GROUP BY `user`, SESSION(ts, {S5})",
    "nested": "SELECT TUMBLE_START(rt, INTERVAL '20' SECOND) AS s, TUMBLE_END(rt, INTERVAL '20' SECOND) AS e, "
    "COUNT(*) AS windows, SUM(cnt) AS cnt FROM ("
    f"SELECT `user`, TUMBLE_ROWTIME(ts, {T10}) AS rt, COUNT(*) AS cnt FROM bids GROUP BY TUMBLE(ts, {T10}), `user`"
    ") GROUP BY TUMBLE(rt, INTERVAL '20' SECOND)",
    "error_start_without_window": f"SELECT `user`, TUMBLE_START(ts, {T10}) FROM bids GROUP BY `user`",
    "error_other_size": f"SELECT TUMBLE_START(ts, INTERVAL '20' SECOND), COUNT(*) FROM bids GROUP BY TUMBLE(ts, {T10})",
}
BATCH = ["tumble", "hop", "session", "tumble_having_where"]


def _plain(value: object) -> object:
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return str(value)
    if isinstance(value, decimal.Decimal):
        return str(value)
    return value


def _env(streaming: bool) -> TableEnvironment:
    settings = EnvironmentSettings.in_streaming_mode() if streaming else EnvironmentSettings.in_batch_mode()
    env = TableEnvironment.create(settings)
    env.get_config().set("parallelism.default", "1")
    env.execute_sql(
        "CREATE TABLE bids (`user` STRING, amount INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) "
        f"WITH ('connector' = 'filesystem', 'path' = '{os.path.join(HERE, 'gw_bids.csv')}', 'format' = 'csv')"
    )
    return env


def _write(env: TableEnvironment, file: str, query: str) -> None:
    lines = []
    try:
        with env.execute_sql(query).collect() as rows:
            for row in rows:
                values = [_plain(v) for v in row]
                lines.append(json.dumps({"kind": str(row.get_row_kind()), "values": values}))
    except Exception as err:  # a query Flink refuses: its message
        java = getattr(err, "java_exception", None)  # Py4JJavaError: the Java exception's own message
        text = str(java.getMessage()) if java is not None else str(err)
        name = str(java.getClass().getName()) if java is not None else type(err).__name__
        lines = [f"!! {name}: {text.splitlines()[0] if text else ''}"]
    with open(os.path.join(HERE, file), "w") as f:
        f.write(f"-- {query}\n")
        f.writelines(line + "\n" for line in lines)
    print(file, len(lines), flush=True)


def main(names: list[str]) -> None:
    stream, batch = _env(True), _env(False)
    for name in names or list(QUERIES):
        _write(stream, f"gw_{name}.txt", QUERIES[name])
        if name in BATCH:
            _write(batch, f"gw_batch_{name}.txt", QUERIES[name])


if __name__ == "__main__":
    main(sys.argv[1:])
