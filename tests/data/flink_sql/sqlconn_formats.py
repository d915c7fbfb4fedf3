"""Flink 2.3's json and csv formats (the same RowData (de)serialization schemas the Kafka tables use), observed through
the filesystem connector: one row of many types written, and JSON/CSV lines read back. Run with PyFlink 2.3:
    python sqlconn_formats.py OUTDIR
prints nothing; writes OUTDIR/sqlconn_json_write.txt, sqlconn_csv_write.txt, sqlconn_json_read.txt."""

import glob
import os
import sys

from pyflink.table import EnvironmentSettings, TableEnvironment

out = sys.argv[1]
t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
t_env.get_config().set("parallelism.default", "1")
t_env.get_config().set("table.local-time-zone", "UTC")
COLUMNS = (
    "id INT, price DECIMAL(10, 2), ts TIMESTAMP(3), ts0 TIMESTAMP(3), ltz TIMESTAMP_LTZ(3), d DATE, "
    "t TIME(0), b BYTES, ok BOOLEAN, tags ARRAY<STRING>, m MAP<STRING, INT>, dbl DOUBLE, n STRING"
)
VALUES = (
    "SELECT 7, CAST(100.00 AS DECIMAL(10, 2)), TIMESTAMP '2024-01-02 03:04:05.500', "
    "TIMESTAMP '2024-01-02 03:04:05', TO_TIMESTAMP_LTZ(1704164645120, 3), DATE '2024-01-02', TIME '03:04:05', "
    "X'0001', TRUE, ARRAY['a', 'b'], MAP['k', 1], CAST(1.5 AS DOUBLE), CAST(NULL AS STRING)"
)
for fmt in ("json", "csv"):
    path = f"{out}/fs_{fmt}"
    columns, values = COLUMNS, VALUES
    if fmt == "csv":  # Flink's csv format has no MAP
        columns, values = columns.replace(" m MAP<STRING, INT>,", ""), values.replace(" MAP['k', 1],", "")
    t_env.execute_sql(
        f"CREATE TABLE w_{fmt} ({columns}) WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = '{fmt}')"
    )
    t_env.execute_sql(f"INSERT INTO w_{fmt} {values}").wait()
    lines = []
    for f in sorted(glob.glob(f"{path}/**", recursive=True)):
        if os.path.isfile(f) and not os.path.basename(f).startswith("."):
            with open(f) as part:
                lines += part.read().splitlines()
    with open(f"{out}/sqlconn_{fmt}_write.txt", "w") as o:
        o.write("\n".join(lines) + "\n")
os.makedirs(f"{out}/in_json", exist_ok=True)
with open(f"{out}/in_json/a.json", "w") as f:
    f.write('{"s": {"a": 1}, "i": "42", "ts": "2024-01-02 03:04:05.12", "ltz": "2024-01-02 03:04:05.12Z", "x": 5}\n')
    f.write('{"s": 12.50, "i": 3}\n')
t_env.execute_sql(
    f"CREATE TABLE r_json (s STRING, i INT, ts TIMESTAMP(3), ltz TIMESTAMP_LTZ(3)) WITH ("
    f"'connector' = 'filesystem', 'path' = '{out}/in_json', 'format' = 'json')"
)
with open(f"{out}/sqlconn_json_read.txt", "w") as o:
    for row in t_env.execute_sql("SELECT s, i, CAST(ts AS STRING), CAST(ltz AS STRING) FROM r_json").collect():
        o.write(repr(tuple(row)) + "\n")
