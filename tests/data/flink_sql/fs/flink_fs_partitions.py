"""Flink 2.3's filesystem connector facts (run with PyFlink: /work/pyflink-venv/bin/python flink_fs_partitions.py):
a partitioned table written in csv and json (directory names, the default partition, escaping, the files'
lines without the partition columns), and the rows read back. Writes fs_partitions.txt beside itself."""

from __future__ import annotations

import os
import sys
import tempfile

from pyflink.table import EnvironmentSettings, TableEnvironment

ROWS = (
    "(1, 'a', CAST(1.50 AS DECIMAL(10, 2)), TIMESTAMP '2024-01-01 10:00:00', '2024-01-01', 10, TRUE), "
    "(2, 'b/c', CAST(2.25 AS DECIMAL(10, 2)), TIMESTAMP '2024-01-01 11:00:00.123', 'x=y:z', 11, FALSE), "
    "(3, CAST(NULL AS STRING), CAST(3.00 AS DECIMAL(10, 2)), TIMESTAMP '2024-01-02 00:00:00', "
    "CAST(NULL AS STRING), 0, CAST(NULL AS BOOLEAN)), "
    "(4, 'd', CAST(4.00 AS DECIMAL(10, 2)), TIMESTAMP '2024-01-02 00:00:00', '', 1, TRUE)"
)


def main() -> None:
    out: list[str] = []
    base = tempfile.mkdtemp(prefix="flink-fs-")
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.get_config().set("parallelism.default", "1")
    for fmt in ("csv", "json"):
        path = os.path.join(base, fmt)
        t_env.execute_sql(
            f"CREATE TABLE t_{fmt} (id BIGINT, name STRING, amount DECIMAL(10, 2), ts TIMESTAMP(3), dt STRING, "
            f"hr INT, ok BOOLEAN) PARTITIONED BY (dt, hr) WITH ('connector' = 'filesystem', 'path' = '{path}', "
            f"'format' = '{fmt}')"
        )
        t_env.execute_sql(f"INSERT INTO t_{fmt} VALUES {ROWS}").wait()
        out.append(f"## {fmt}: files")
        for root, _, files in sorted(os.walk(path)):
            for name in sorted(files):
                if name.startswith(".") or name.startswith("_"):
                    continue
                rel = os.path.relpath(root, path)
                with open(os.path.join(root, name)) as f:
                    for line in f.read().splitlines():
                        out.append(f"{rel}: {line}")
        out.append(f"## {fmt}: read back")
        sys.stdout.write("\n".join(out) + "\n")
        try:
            with t_env.execute_sql(f"SELECT * FROM t_{fmt}").collect() as rows:
                out.extend(sorted(str(r) for r in rows))
        except Exception as exc:  # Flink refuses some partitions' reads: keep its reason
            out.append("error: " + str(exc).splitlines()[0][:200])
    target = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fs_partitions.txt")
    with open(target, "w") as f:
        f.write("\n".join(out) + "\n")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
