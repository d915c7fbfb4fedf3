"""Rows/s into PostgreSQL: strom's JdbcSink (at-least-once and exactly-once, p=1 and p=2) against psycopg from a
plain loop (batched ``executemany`` and ``COPY``), all in the same run on one throw-away server.

    python benchmarks/jdbc.py                 # 3 rounds, N = 300 000 rows, prints the table
    python benchmarks/jdbc.py --quick         # smoke run
    python benchmarks/jdbc.py --write-docs    # ... and its section of docs/benchmarks.md (`make bench-jdbc`)

The server is the tests' (``tests/postgres_server.py``: Debian's PostgreSQL, ``initdb`` into a temporary
directory, ``fsync = off``), so the figures are the client side's. Rows are ``(id BIGINT, customer TEXT,
amount NUMERIC(10, 2))``. A strom figure is N / the wall time of ``execute()`` — cluster start-up (about a
second) included — with checkpoints every second; the loop's is N / its own wall time. Each round runs every
configuration once, in a rotating order; ratios to the batched loop are paired within rounds.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

from bench import DOCS, machine, md_table, splice_section

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from postgres_server import PostgresServer

BEGIN = "<!-- jdbc-benchmarks:begin -->"
END = "<!-- jdbc-benchmarks:end -->"
BATCH = 5000


def row(i: int) -> tuple[int, str, Decimal]:
    return i, f"c{i % 97}", Decimal(i % 10000) / 100


def _reset(server: PostgresServer) -> None:
    with server.connect("postgres") as conn:
        conn.execute("DROP TABLE IF EXISTS sink")
        conn.execute("CREATE TABLE sink (id BIGINT NOT NULL, customer TEXT NOT NULL, amount NUMERIC(10, 2) NOT NULL)")


def _count(server: PostgresServer) -> int:
    with server.connect("postgres") as conn:
        return int(conn.execute("SELECT count(*) FROM sink").fetchone()[0])


def loop_executemany(server: PostgresServer, n: int) -> float:
    t0 = time.perf_counter()
    with server.connect("postgres") as conn, conn.cursor() as cur:
        for lo in range(0, n, BATCH):
            with conn.transaction():
                cur.executemany(
                    "INSERT INTO sink (id, customer, amount) VALUES (%s, %s, %s)",
                    [row(i) for i in range(lo, min(n, lo + BATCH))],
                )
    return time.perf_counter() - t0


def loop_copy(server: PostgresServer, n: int) -> float:
    t0 = time.perf_counter()
    with (
        server.connect("postgres") as conn,
        conn.cursor() as cur,
        conn.transaction(),
        cur.copy("COPY sink (id, customer, amount) FROM STDIN") as copy,
    ):
        for i in range(n):
            copy.write_row(row(i))
    return time.perf_counter() - t0


def strom_job(server: PostgresServer, n: int, parallelism: int, exactly_once: bool) -> float:
    from strom.common import Configuration
    from strom.datastream import StreamExecutionEnvironment
    from strom.datastream.connectors.jdbc import JdbcExactlyOnceOptions, JdbcExecutionOptions, JdbcSink

    env = StreamExecutionEnvironment.get_execution_environment(Configuration({"restart-strategy.type": "none"}))
    env.set_parallelism(parallelism)
    env.enable_checkpointing(1000)
    options = server_options(server)
    sql = "INSERT INTO sink (id, customer, amount) VALUES (?, ?, ?)"
    execution = JdbcExecutionOptions.builder().with_batch_size(BATCH).build()
    sink: Any = (
        JdbcSink.exactly_once_sink(sql, None, options, execution, JdbcExactlyOnceOptions(transaction_id_prefix="bench"))
        if exactly_once
        else JdbcSink.sink(sql, None, options, execution)
    )
    env.from_sequence(0, n - 1).map(row).sink_to(sink)
    t0 = time.perf_counter()
    env.execute("jdbc bench")
    return time.perf_counter() - t0


def server_options(server: PostgresServer) -> Any:
    from strom.datastream.connectors.jdbc import JdbcConnectionOptions

    return (
        JdbcConnectionOptions.JdbcConnectionOptionsBuilder()
        .with_url(server.url("postgres"))
        .with_user_name("strom")
        .build()
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--n", type=int)
    ap.add_argument("--write-docs", action="store_true")
    a = ap.parse_args(argv)
    rounds = a.rounds or (1 if a.quick else 3)
    n = a.n or (20_000 if a.quick else 300_000)
    configs: list[tuple[str, Any]] = [
        ("psycopg executemany, 5000 per transaction (plain loop)", lambda s: loop_executemany(s, n)),
        ("psycopg COPY, one transaction (plain loop)", lambda s: loop_copy(s, n)),
        ("strom JdbcSink.sink (at-least-once) p=1", lambda s: strom_job(s, n, 1, False)),
        ("strom JdbcSink.sink (at-least-once) p=2", lambda s: strom_job(s, n, 2, False)),
        ("strom JdbcSink.exactly_once_sink p=1", lambda s: strom_job(s, n, 1, True)),
        ("strom JdbcSink.exactly_once_sink p=2", lambda s: strom_job(s, n, 2, True)),
    ]
    seconds: dict[str, list[float]] = {name: [] for name, _ in configs}
    server = PostgresServer.start()
    try:
        for r in range(rounds):
            order = configs[r % len(configs) :] + configs[: r % len(configs)]
            for name, run in order:
                _reset(server)
                s = run(server)
                got = _count(server)
                if got != n:
                    raise SystemExit(f"{name}: {got} rows in the table, expected {n}")
                seconds[name].append(s)
                print(f"round {r + 1}/{rounds} {name}: {n / s:,.0f} rows/s", file=sys.stderr)
    finally:
        server.close()
    base = configs[0][0]
    rows = []
    for name, _ in configs:
        ratios = [seconds[base][i] / seconds[name][i] for i in range(rounds)]
        rows.append(
            [
                name,
                f"{n / statistics.median(seconds[name]):,.0f}",
                f"{statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f})",
            ]
        )
    table = md_table(["writer", "rows/s (median)", "× executemany loop, paired"], rows)
    print(table)
    if a.write_docs:
        m = machine()
        section = "\n".join(
            [
                BEGIN,
                "## PostgreSQL (JdbcSink)",
                "",
                f"Measured {dt.date.today().isoformat()} on {m['cpu']}, {m['ram']}, {m['python']}, commit "
                f"{m['commit']}; `python benchmarks/jdbc.py {' '.join(sys.argv[1:])}`; {rounds} rounds of N = {n:,} "
                "rows `(BIGINT, TEXT, NUMERIC)` into an unindexed table; the server on the same 2 cores "
                "(`fsync = off`). strom's figures are N / the wall time of `execute()` (cluster start-up included, "
                "checkpoints every second); every run's row count is checked.",
                "",
                table,
                END,
            ]
        )
        DOCS.write_text(splice_section(DOCS.read_text() if DOCS.exists() else "", section, BEGIN, END))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
