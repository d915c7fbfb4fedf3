"""The program that produced the facts beside it: Flink 2.3's results of temporal joins and MATCH_RECOGNIZE.

Run with PyFlink 2.3.0 (never imported by the tests): ``python temporal_facts.py [name ...]`` writes
``../<name>.txt`` (``temporal_*`` / ``match_*``; ``--batch``: ``../<name>_batch.txt`` for the names in ``BATCH``,
in BATCH mode), one JSON line per result row: ``{"kind": "+I", "values": [...]}``
with timestamps as ``str(datetime)``, in the order Flink emitted them (parallelism 1, STREAMING); a query Flink
refuses stores its error's first line as ``{"error": ...}``. Inputs: ``orders.csv``, ``rates.csv``, ``ticks.csv``
(watermark ``ts - 1 s``; every file in rowtime order but for order 8, one second late, within the watermark's
delay: a row behind the watermark is dropped by Flink's operators and when that happens depends on timing).
"""

from __future__ import annotations

import datetime
import decimal
import json
import os
import sys

from pyflink.table import EnvironmentSettings, TableEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.dirname(HERE)

MR = "SELECT * FROM ticks MATCH_RECOGNIZE (PARTITION BY sym ORDER BY ts "
TJ = "FROM orders AS o {join} {rates} FOR SYSTEM_TIME AS OF o.ts AS r ON o.currency = r.currency"

QUERIES: dict[str, str] = {
    "temporal_inner": "SELECT o.id, o.currency, o.amount, r.rate, o.ts, r.ts AS rate_ts "
    + TJ.format(join="JOIN", rates="rates"),
    "temporal_left": "SELECT o.id, o.currency, o.amount * r.rate AS converted, r.ts AS rate_ts "
    + TJ.format(join="LEFT JOIN", rates="rates"),
    "temporal_view_inner": "SELECT o.id, r.rate, r.ts AS rate_ts " + TJ.format(join="JOIN", rates="rates_view"),
    "temporal_view_left": "SELECT o.id, r.rate " + TJ.format(join="LEFT JOIN", rates="rates_view"),
    "temporal_residual": "SELECT o.id, r.rate " + TJ.format(join="LEFT JOIN", rates="rates") + " AND r.rate > 101",
    "temporal_no_pk": "SELECT o.id, r.rate " + TJ.format(join="JOIN", rates="rates_log"),
    "match_v_shape": MR + "MEASURES START_ROW.ts AS start_ts, LAST(DOWN.ts) AS bottom_ts, LAST(UP.ts) AS end_ts "
    "ONE ROW PER MATCH AFTER MATCH SKIP TO LAST UP PATTERN (START_ROW DOWN+ UP) DEFINE "
    "DOWN AS (LAST(DOWN.price, 1) IS NULL AND DOWN.price < START_ROW.price) OR DOWN.price < LAST(DOWN.price, 1), "
    "UP AS UP.price > LAST(DOWN.price, 1)) AS T",
    "match_rise_agg": MR + "MEASURES FIRST(A.price) AS first_p, LAST(A.price) AS last_p, AVG(A.price) AS avg_p, "
    "COUNT(A.price) AS n, SUM(A.price) AS s, MIN(A.price) AS lo, MAX(A.price) AS hi, B.price AS b_price, "
    "MATCH_ROWTIME() AS mt ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW PATTERN (A{2,} B) DEFINE "
    "A AS PREV(A.price) IS NULL OR A.price > PREV(A.price), B AS B.price < PREV(B.price)) AS T",
    "match_prev_first": MR + "MEASURES A.price AS a_price, B.price AS b_price ONE ROW PER MATCH "
    "AFTER MATCH SKIP TO NEXT ROW PATTERN (A B) DEFINE A AS PREV(A.price) IS NULL, B AS B.price > A.price) AS T",
    "match_exact_optional": MR + "MEASURES FIRST(A.ts) AS a_ts, FIRST(B.price) AS b1, LAST(B.price) AS b2, "
    "C.price AS c_price AFTER MATCH SKIP TO NEXT ROW PATTERN (A B{2} C? D) DEFINE A AS A.price < 20, "
    "B AS B.price > 14, C AS C.price < 16, D AS D.price > 0) AS T",
    "match_reluctant": MR + "MEASURES FIRST(B.ts) AS b_first, LAST(B.ts) AS b_last, C.price AS c_price "
    "AFTER MATCH SKIP PAST LAST ROW PATTERN (A B+? C) DEFINE A AS A.price < 20, B AS B.price > 10, "
    "C AS C.price > 20) AS T",
    "match_greedy": MR + "MEASURES FIRST(B.ts) AS b_first, LAST(B.ts) AS b_last, C.price AS c_price "
    "AFTER MATCH SKIP PAST LAST ROW PATTERN (A B+ C) DEFINE A AS A.price < 20, B AS B.price > 10, "
    "C AS C.price > 20) AS T",
    "match_star_range": MR + "MEASURES A.price AS a_price, COUNT(B.price) AS nb, C.price AS c_price "
    "AFTER MATCH SKIP TO NEXT ROW PATTERN (A B{1,2}? C) DEFINE A AS A.price < 20, B AS B.price >= 15, "
    "C AS C.price > 17) AS T",
    "match_star": MR + "MEASURES A.price AS a_price, COUNT(B.price) AS nb, C.price AS c_price "
    "AFTER MATCH SKIP PAST LAST ROW PATTERN (A B* C) DEFINE A AS A.price < 15, B AS B.price >= 15, "
    "C AS C.price < 15) AS T",
    "match_within": MR + "MEASURES A.ts AS a_ts, LAST(B.ts) AS b_ts ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW "
    "PATTERN (A B+ C) WITHIN INTERVAL '3' SECOND DEFINE A AS A.price < 20, B AS B.price >= A.price, "
    "C AS C.price < LAST(B.price)) AS T",
    "match_skip_first": MR + "MEASURES FIRST(A.ts) AS a_ts, LAST(B.ts) AS b_ts AFTER MATCH SKIP TO FIRST B "
    "PATTERN (A+ B) DEFINE A AS A.price > 13, B AS B.price < 16) AS T",
    "match_no_partition": "SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts MEASURES A.sym AS s1, B.sym AS s2, "
    "B.price - A.price AS diff PATTERN (A B) DEFINE A AS A.sym = 'BETA', B AS B.sym = 'ACME') AS T",
    "match_prev_simple": MR + "MEASURES FIRST(B.price) AS b1, LAST(B.price) AS b2, C.price AS c AFTER MATCH SKIP "
    "PAST LAST ROW PATTERN (A B+ C) DEFINE B AS B.price > PREV(B.price), C AS C.price < PREV(C.price)) AS T",
    "match_last_offset": MR + "MEASURES FIRST(B.price) AS b1, LAST(B.price) AS b2, C.price AS c AFTER MATCH SKIP "
    "PAST LAST ROW PATTERN (A B+ C) DEFINE B AS B.price > LAST(A.price), C AS C.price < LAST(B.price, 1)) AS T",
    "match_within_ok": MR + "MEASURES A.ts AS a_ts, C.ts AS c_ts AFTER MATCH SKIP TO NEXT ROW PATTERN (A B* C) "
    "WITHIN INTERVAL '3' SECOND DEFINE A AS A.price > 20, B AS B.price > 16, C AS C.price < 16) AS T",
    "match_optional_reluctant": MR + "MEASURES A.price AS a, B.price AS b, C.price AS c AFTER MATCH SKIP TO NEXT "
    "ROW PATTERN (A B?? C) DEFINE A AS A.price < 20, B AS B.price > 16, C AS C.price > 16) AS T",
    "match_exact_range": MR + "MEASURES A.price AS a, SUM(B.price) AS sb, C.price AS c AFTER MATCH SKIP TO NEXT "
    "ROW PATTERN (A B{2,3} C) DEFINE A AS A.price < 20, B AS B.price > 16, C AS C.price < 20) AS T",
    "match_no_partition_price": "SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts MEASURES A.sym AS s1, B.sym AS s2, "
    "A.price AS a, B.price AS b PATTERN (A B) DEFINE A AS A.price < 6, B AS B.price > 10) AS T",
    "match_default_skip": MR + "MEASURES A.price AS a, B.price AS b PATTERN (A B) DEFINE A AS A.price < 20, "
    "B AS B.price > A.price) AS T",
    "match_measures": MR + "MEASURES FIRST(B.price) AS f, LAST(B.price) AS l, FIRST(B.price, 1) AS f1, "
    "LAST(B.price, 1) AS l1, AVG(B.price) AS av, COUNT(B.price) AS n, SUM(B.price) AS s, MIN(B.price) AS lo, "
    "MAX(B.price) AS hi, LAST(B.price) - FIRST(B.price) AS d, A.ts AS a_ts, MATCH_ROWTIME() AS mt "
    "AFTER MATCH SKIP PAST LAST ROW PATTERN (A B+? C) DEFINE A AS A.price < 15, B AS B.price >= 15, "
    "C AS C.price < 15) AS T",
    "match_skip_to_first": MR + "MEASURES A.price AS a, FIRST(B.price) AS b1, C.price AS c AFTER MATCH SKIP TO "
    "FIRST B PATTERN (A B{2} C) DEFINE A AS A.price < 30, B AS B.price > 0, C AS C.price > 0) AS T",
    "match_skip_to_last": MR + "MEASURES A.price AS a, LAST(B.price) AS b2, C.price AS c AFTER MATCH SKIP TO "
    "LAST B PATTERN (A B{2} C) DEFINE A AS A.price < 30, B AS B.price > 0, C AS C.price > 0) AS T",
    "match_greedy_optional": MR + "MEASURES A.price AS a, B.price AS b, C.price AS c AFTER MATCH SKIP TO NEXT ROW "
    "PATTERN (A B? C) DEFINE A AS A.price < 20, B AS B.price > 16, C AS C.price > 16) AS T",
    "match_aggregate_define": MR + "MEASURES FIRST(B.ts) AS b_first, COUNT(B.price) AS n, AVG(B.price) AS av "
    "AFTER MATCH SKIP PAST LAST ROW PATTERN (A B+? C) DEFINE A AS A.price < 15, B AS SUM(B.price) < 60, "
    "C AS C.price > 20) AS T",
    "match_star_reluctant": MR + "MEASURES A.price AS a, COUNT(B.price) AS nb, C.price AS c AFTER MATCH SKIP TO "
    "NEXT ROW PATTERN (A B*? C) DEFINE A AS A.price < 20, B AS B.price > 14, C AS C.price > 18) AS T",
    "match_at_least": MR + "MEASURES A.price AS a, COUNT(B.price) AS nb, C.price AS c AFTER MATCH SKIP TO NEXT ROW "
    "PATTERN (A B{2,} C) DEFINE A AS A.price < 20, B AS B.price > 16, C AS C.price < 17) AS T",
    "match_up_to": MR + "MEASURES A.price AS a, COUNT(B.price) AS nb, C.price AS c AFTER MATCH SKIP TO NEXT ROW "
    "PATTERN (A B{,2} C) DEFINE A AS A.price < 20, B AS B.price > 16, C AS C.price < 20) AS T",
    "match_optional_loop": MR + "MEASURES A.price AS a, B.price AS b, COUNT(C.price) AS nc, D.price AS d "
    "AFTER MATCH SKIP PAST LAST ROW PATTERN (A B? C+? D) DEFINE A AS A.price < 20, B AS B.price > 18, "
    "C AS C.price > 14, D AS D.price < 16) AS T",
    "match_within_releases": MR + "MEASURES A.price AS a, FIRST(B.price) AS b1, LAST(B.price) AS b2, C.price AS c "
    "AFTER MATCH SKIP PAST LAST ROW PATTERN (A B+ C) WITHIN INTERVAL '4' SECOND DEFINE B AS B.price > LAST(A.price), "
    "C AS C.price < LAST(B.price, 1)) AS T",
    "match_then_window": "SELECT window_start, window_end, COUNT(*) AS n, MAX(a) AS hi FROM TABLE(TUMBLE(TABLE "
    "matched, DESCRIPTOR(mt), INTERVAL '5' SECOND)) GROUP BY window_start, window_end",
    "temporal_then_window": "SELECT window_start, currency, SUM(converted) AS total FROM TABLE(TUMBLE(TABLE "
    "converted, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end, currency",
    "match_greedy_end": MR + "MEASURES A.price AS a PATTERN (A B+) DEFINE B AS B.price > 0) AS T",
}


def _plain(value: object) -> object:
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return str(value)
    if isinstance(value, decimal.Decimal):
        return str(value)
    return value


VIEWS = [  # time attributes out of a match and a temporal join, for windows downstream
    "CREATE TEMPORARY VIEW matched AS " + MR + "MEASURES A.price AS a, MATCH_ROWTIME() AS mt PATTERN (A B) "
    "DEFINE A AS A.price < 20, B AS B.price > A.price) AS T",
    "CREATE TEMPORARY VIEW converted AS SELECT o.id, o.currency, o.ts, o.amount * r.rate AS converted "
    + TJ.format(join="JOIN", rates="rates"),
]
BATCH = ["temporal_inner", "match_v_shape", "match_default_skip"]  # written as ``<name>_batch.txt``


def _env(parallelism: int, batch: bool = False) -> TableEnvironment:
    settings = EnvironmentSettings.in_batch_mode() if batch else EnvironmentSettings.in_streaming_mode()
    env = TableEnvironment.create(settings)
    env.get_config().set("parallelism.default", str(parallelism))
    csv = "'connector' = 'filesystem', 'format' = 'csv', 'path' = '{}'"
    env.execute_sql(
        "CREATE TABLE orders (id INT, currency STRING, amount INT, ts TIMESTAMP(3), "
        "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (" + csv.format(os.path.join(HERE, "orders.csv")) + ")"
    )
    for name, pk in (("rates", ", PRIMARY KEY (currency) NOT ENFORCED"), ("rates_log", "")):
        env.execute_sql(
            f"CREATE TABLE {name} (currency STRING, rate INT, ts TIMESTAMP(3), "
            f"WATERMARK FOR ts AS ts - INTERVAL '1' SECOND{pk}) WITH ("
            + csv.format(os.path.join(HERE, "rates.csv"))
            + ")"
        )
    env.execute_sql(
        "CREATE TEMPORARY VIEW rates_view AS SELECT currency, rate, ts FROM (SELECT *, ROW_NUMBER() OVER "
        "(PARTITION BY currency ORDER BY ts DESC) AS rn FROM rates_log) WHERE rn = 1"
    )
    env.execute_sql(
        "CREATE TABLE ticks (sym STRING, price INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) "
        "WITH (" + csv.format(os.path.join(HERE, "ticks.csv")) + ")"
    )
    for statement in VIEWS:
        env.execute_sql(statement)
    return env


def _rows(env: TableEnvironment, query: str) -> list[str]:
    lines = []
    with env.execute_sql(query).collect() as rows:
        for row in rows:
            lines.append(json.dumps({"kind": str(row.get_row_kind()), "values": [_plain(v) for v in row]}))
    return lines


def main_batch() -> None:
    """BATCH mode at parallelism 1: the rows, or Flink's refusal."""
    env = _env(1, batch=True)
    for name in BATCH:
        lines = [f"-- {QUERIES[name]}"]
        try:
            lines += _rows(env, QUERIES[name])
        except Exception as exc:  # the refusal is the fact
            text = [line for line in str(exc).splitlines() if line.strip()]
            java = [line for line in text if "Exception:" in line]
            lines.append(json.dumps({"error": (java[0] if java else text[0]).strip()}))
        with open(os.path.join(OUT, f"{name}_batch.txt"), "w") as f:
            f.writelines(line + "\n" for line in lines)


def main(names: list[str]) -> None:
    if names == ["--batch"]:
        main_batch()
        return
    envs = {1: _env(1), 2: _env(2)}
    for name in names or list(QUERIES):
        query = QUERIES[name]
        lines = [f"-- {query}"]
        try:
            lines += _rows(envs[1], query)
            final = sorted(_rows(envs[2], query))
            lines.append("-- p=2 " + json.dumps(final))
        except Exception as exc:  # the refusal is the fact
            text = [line for line in str(exc).splitlines() if line.strip()]
            java = [line for line in text if "Exception:" in line]
            lines.append(json.dumps({"error": (java[0] if java else text[0]).strip()}))
        with open(os.path.join(OUT, f"{name}.txt"), "w") as f:
            f.writelines(line + "\n" for line in lines)
        print(name, len(lines), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
