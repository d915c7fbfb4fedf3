"""The program that produced the ``win_*.txt`` facts beside it: Flink 2.3's results of sliding group windows whose
size is not a multiple of their slide (``GROUP BY HOP(ts, slide, size)``, Flink's legacy ``WindowOperator``) and of
FLOAT aggregates (``SUM``/``AVG``/``MIN``/``MAX`` accumulate in Java ``float``). Run with PyFlink 2.3.0 (never
imported by the tests): ``python win_queries.py [name ...]`` writes ``win_<name>.txt`` (STREAMING, parallelism 1) and
``win_batch_<name>.txt`` (BATCH) for the names in ``BATCH``, one JSON line per result row ``{"kind": "+I", "values":
[...]}`` (timestamps as ``str(datetime)``) after a ``-- query`` line; a query Flink refuses writes ``-- query`` and
``!! <exception>: <first line>``.
Input: ``win_prices.csv`` (name, price FLOAT, ts; watermark ``ts - 3 s``: no record is late), the rows of PyFlink's
``windowing/sliding_window.py`` and three more.
"""

from __future__ import annotations

import datetime
import decimal
import json
import os
import sys

from pyflink.table import EnvironmentSettings, TableEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))
H25 = "INTERVAL '2' SECOND, INTERVAL '5' SECOND"
H37 = "INTERVAL '3' SECOND, INTERVAL '7' SECOND"
H52 = "INTERVAL '5' SECOND, INTERVAL '2' SECOND"
T5 = "INTERVAL '5' SECOND"
AGGS = "COUNT(*) AS cnt, SUM(price) AS total, AVG(price) AS av, MIN(price) AS mn, MAX(price) AS mx"

QUERIES: dict[str, str] = {
    "hop_2_5": f"SELECT name, HOP_START(ts, {H25}) AS s, HOP_END(ts, {H25}) AS e, HOP_ROWTIME(ts, {H25}) AS rt, "
    f"{AGGS} FROM prices GROUP BY HOP(ts, {H25}), name",
    "hop_3_7_global": f"SELECT HOP_END(ts, {H37}) AS e, COUNT(*) AS cnt, SUM(price) AS total FROM prices "
    f"GROUP BY HOP(ts, {H37})",
    "hop_slide_5_size_2": f"SELECT name, HOP_START(ts, {H52}) AS s, COUNT(*) AS cnt, SUM(price) AS total "
    f"FROM prices GROUP BY HOP(ts, {H52}), name",
    "hop_having": f"SELECT name, HOP_END(ts, {H25}) AS e, SUM(price) AS total FROM prices WHERE price > 1 "
    f"GROUP BY HOP(ts, {H25}), name HAVING COUNT(*) > 1",
    "hop_2_4_float": f"SELECT name, HOP_START(ts, INTERVAL '2' SECOND, INTERVAL '4' SECOND) AS s, {AGGS} FROM prices "
    "GROUP BY HOP(ts, INTERVAL '2' SECOND, INTERVAL '4' SECOND), name",
    "tumble_float": f"SELECT name, TUMBLE_START(ts, {T5}) AS s, {AGGS} FROM prices GROUP BY TUMBLE(ts, {T5}), name",
    "tvf_hop_float": f"SELECT name, window_start, {AGGS} FROM TABLE(HOP(TABLE prices, DESCRIPTOR(ts), "
    "INTERVAL '2' SECOND, INTERVAL '4' SECOND)) GROUP BY window_start, window_end, name",
    "group_float": f"SELECT name, {AGGS} FROM prices GROUP BY name",
    "float_expr": "SELECT name, price, price * 3 AS p3, price + price AS p2, price / 3 AS pd, price - 0.1 AS pm, "
    "CAST(price AS STRING) AS s, CAST(price AS DOUBLE) AS d FROM prices",
    "error_tvf_hop_not_multiple": f"SELECT window_start, window_end, SUM(price) AS total FROM TABLE(HOP(TABLE prices, "
    f"DESCRIPTOR(ts), {H25})) GROUP BY window_start, window_end",
}
BATCH = ["hop_2_5", "group_float"]


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
        "CREATE TABLE prices (name STRING, price FLOAT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '3' SECOND) "
        f"WITH ('connector' = 'filesystem', 'path' = '{os.path.join(HERE, 'win_prices.csv')}', 'format' = 'csv')"
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
        _write(stream, f"win_{name}.txt", QUERIES[name])
        if name in BATCH:
            _write(batch, f"win_batch_{name}.txt", QUERIES[name])


if __name__ == "__main__":
    main(sys.argv[1:])
