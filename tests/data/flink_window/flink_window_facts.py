"""The program that produced the facts beside it: Flink 2.3's results of window queries (PyFlink, on the JVM).

Run with PyFlink 2.3.0 (never imported by the tests): ``python flink_window_facts.py [name ...]`` writes
``<name>.txt`` here, one JSON line per result row: ``{"kind": "+I", "values": [...]}`` with timestamps as
``str(datetime)`` and decimals as strings, in the order Flink emitted them (parallelism 1, STREAMING).

Inputs: ``bids.csv`` (user, amount, ts; watermark ``ts - 5 s``: no record is late), ``clicks.csv`` (user, page,
ts; same watermark) and ``bids_epoch.csv`` (bids with epoch milliseconds, for TIMESTAMP_LTZ rowtimes).
"""

from __future__ import annotations

import datetime
import decimal
import json
import os
import sys

from pyflink.table import EnvironmentSettings, TableEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))

TVF_TUMBLE = "TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))"
TVF_HOP = "TABLE(HOP(TABLE bids, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))"
TVF_CUMULATE = "TABLE(CUMULATE(TABLE bids, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND))"
AGG = "window_start, window_end, `user`, COUNT(*) AS cnt, SUM(amount) AS total, MAX(amount) AS mx"

QUERIES: dict[str, str] = {
    "tvf_tumble": f"SELECT * FROM {TVF_TUMBLE}",
    "tvf_hop": f"SELECT * FROM {TVF_HOP}",
    "tvf_cumulate": f"SELECT * FROM {TVF_CUMULATE}",
    "tvf_tumble_offset": "SELECT * FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND, "
    "INTERVAL '3' SECOND))",
    "agg_tumble": f"SELECT {AGG} FROM {TVF_TUMBLE} GROUP BY window_start, window_end, `user`",
    "agg_hop": f"SELECT {AGG} FROM {TVF_HOP} GROUP BY window_start, window_end, `user`",
    "agg_cumulate": f"SELECT {AGG} FROM {TVF_CUMULATE} GROUP BY window_start, window_end, `user`",
    "agg_tumble_global": f"SELECT window_start, window_end, COUNT(*) AS cnt, SUM(amount) AS total FROM {TVF_TUMBLE} "
    "GROUP BY window_start, window_end",
    "agg_session": "SELECT window_start, window_end, `user`, COUNT(*) AS cnt, SUM(amount) AS total FROM "
    "TABLE(SESSION(TABLE bids PARTITION BY `user`, DESCRIPTOR(ts), INTERVAL '5' SECOND)) "
    "GROUP BY window_start, window_end, `user`",
    "tvf_session": "SELECT * FROM TABLE(SESSION(TABLE bids PARTITION BY `user`, DESCRIPTOR(ts), INTERVAL '5' SECOND))",
    "topn_agg": "SELECT * FROM (SELECT *, ROW_NUMBER() OVER "
    "(PARTITION BY window_start, window_end ORDER BY total DESC) "
    f"AS rn FROM (SELECT {AGG} FROM {TVF_TUMBLE} GROUP BY window_start, window_end, `user`)) WHERE rn <= 2",
    "topn_tvf": "SELECT * FROM (SELECT `user`, amount, ts, window_start, window_end, ROW_NUMBER() OVER (PARTITION BY "
    f"window_start, window_end ORDER BY amount DESC) AS rn FROM {TVF_TUMBLE}) WHERE rn <= 2",
    "dedup_first": "SELECT * FROM (SELECT `user`, amount, ts, window_start, window_end, ROW_NUMBER() OVER "
    "(PARTITION BY "
    f"window_start, window_end, `user` ORDER BY ts ASC) AS rn FROM {TVF_TUMBLE}) WHERE rn = 1",
    "dedup_last": "SELECT * FROM (SELECT `user`, amount, ts, window_start, window_end, ROW_NUMBER() OVER (PARTITION BY "
    f"window_start, window_end, `user` ORDER BY ts DESC) AS rn FROM {TVF_TUMBLE}) WHERE rn = 1",
    "window_join_inner": "SELECT L.`user`, L.amount, R.page, L.window_start, L.window_end FROM "
    f"(SELECT * FROM {TVF_TUMBLE}) L JOIN (SELECT * FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), "
    "INTERVAL '10' SECOND))) R ON L.`user` = R.`user` AND L.window_start = R.window_start AND "
    "L.window_end = R.window_end",
    "window_join_left": "SELECT L.`user`, L.amount, R.page, L.window_start, L.window_end FROM "
    f"(SELECT * FROM {TVF_TUMBLE}) L LEFT JOIN (SELECT * FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), "
    "INTERVAL '10' SECOND))) R ON L.`user` = R.`user` AND L.window_start = R.window_start AND "
    "L.window_end = R.window_end",
    "window_join_full": "SELECT L.`user`, L.amount, R.`user`, R.page, L.window_start, R.window_start FROM "
    f"(SELECT * FROM {TVF_TUMBLE}) L FULL JOIN (SELECT * FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), "
    "INTERVAL '10' SECOND))) R ON L.`user` = R.`user` AND L.window_start = R.window_start AND "
    "L.window_end = R.window_end",
    "window_join_semi": f"SELECT * FROM (SELECT `user`, amount, window_start, window_end FROM {TVF_TUMBLE}) L "
    "WHERE L.`user` IN (SELECT R.`user` FROM (SELECT * FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), "
    "INTERVAL '10' SECOND))) R WHERE L.window_start = R.window_start AND L.window_end = R.window_end)",
    "window_join_anti": f"SELECT * FROM (SELECT `user`, amount, window_start, window_end FROM {TVF_TUMBLE}) L "
    "WHERE NOT EXISTS (SELECT * FROM (SELECT * FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), "
    "INTERVAL '10' SECOND))) R WHERE L.`user` = R.`user` AND L.window_start = R.window_start AND "
    "L.window_end = R.window_end)",
    "interval_join_inner": "SELECT b.`user`, b.amount, c.page, b.ts, c.ts FROM bids b JOIN clicks c "
    "ON b.`user` = c.`user` AND b.ts BETWEEN c.ts - INTERVAL '2' SECOND AND c.ts + INTERVAL '3' SECOND",
    "interval_join_left": "SELECT b.`user`, b.amount, c.page, b.ts, c.ts FROM bids b LEFT JOIN clicks c "
    "ON b.`user` = c.`user` AND b.ts BETWEEN c.ts - INTERVAL '2' SECOND AND c.ts + INTERVAL '3' SECOND",
    "interval_join_full": "SELECT b.`user`, b.amount, c.`user`, c.page, b.ts, c.ts FROM bids b FULL JOIN clicks c "
    "ON b.`user` = c.`user` AND b.ts BETWEEN c.ts - INTERVAL '2' SECOND AND c.ts + INTERVAL '3' SECOND",
    "over_rows_bounded": "SELECT `user`, amount, ts, SUM(amount) OVER w AS s, COUNT(amount) OVER w AS c, "
    "MAX(amount) OVER w AS m FROM bids WINDOW w AS (PARTITION BY `user` ORDER BY ts "
    "ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)",
    "over_range_bounded": "SELECT `user`, amount, ts, SUM(amount) OVER w AS s, COUNT(amount) OVER w AS c "
    "FROM bids WINDOW w AS (PARTITION BY `user` ORDER BY ts RANGE BETWEEN INTERVAL '5' SECOND PRECEDING "
    "AND CURRENT ROW)",
    "over_rows_unbounded": "SELECT `user`, amount, ts, SUM(amount) OVER w AS s, COUNT(amount) OVER w AS c "
    "FROM bids WINDOW w AS (PARTITION BY `user` ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)",
    "over_range_unbounded": "SELECT `user`, amount, ts, SUM(amount) OVER w AS s, COUNT(amount) OVER w AS c "
    "FROM bids WINDOW w AS (PARTITION BY `user` ORDER BY ts RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)",
    # TIMESTAMP_LTZ values as strings in the session time zone (PyFlink's collect() cannot pickle them)
    "ltz_tumble_day": "SELECT window_start, window_end, CAST(window_time AS STRING), COUNT(*) AS cnt, "
    "SUM(amount) AS total FROM TABLE(TUMBLE(TABLE bids_ltz, DESCRIPTOR(ts), INTERVAL '1' DAY)) "
    "GROUP BY window_start, window_end, window_time",
    "ltz_tvf_hour": "SELECT `user`, amount, CAST(ts AS STRING), window_start, window_end, CAST(window_time AS STRING) "
    "FROM TABLE(TUMBLE(TABLE bids_ltz, DESCRIPTOR(ts), INTERVAL '1' HOUR))",
}


def _plain(value: object) -> object:
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return str(value)
    if isinstance(value, decimal.Decimal):
        return str(value)
    return value


def _env() -> TableEnvironment:
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("parallelism.default", "1")
    env.get_config().set("table.local-time-zone", "Asia/Kolkata")
    for name, second in (("bids", "amount INT"), ("clicks", "page STRING")):
        env.execute_sql(
            f"CREATE TABLE {name} (`user` STRING, {second}, ts TIMESTAMP(3), "
            "WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('connector' = 'filesystem', "
            f"'path' = '{os.path.join(HERE, name + '.csv')}', 'format' = 'csv')"
        )
    env.execute_sql(
        "CREATE TABLE bids_ltz (`user` STRING, amount INT, epoch BIGINT, ts AS TO_TIMESTAMP_LTZ(epoch, 3), "
        "WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('connector' = 'filesystem', "
        f"'path' = '{os.path.join(HERE, 'bids_epoch.csv')}', 'format' = 'csv')"
    )
    return env


def main(names: list[str]) -> None:
    env = _env()
    for name in names or list(QUERIES):
        result = env.execute_sql(QUERIES[name])
        lines = []
        with result.collect() as rows:
            for row in rows:
                values = [_plain(v) for v in row]
                lines.append(json.dumps({"kind": str(row.get_row_kind()), "values": values}))
        with open(os.path.join(HERE, f"{name}.txt"), "w") as f:
            f.write(f"-- {QUERIES[name]}\n")
            f.writelines(line + "\n" for line in lines)
        print(name, len(lines), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
