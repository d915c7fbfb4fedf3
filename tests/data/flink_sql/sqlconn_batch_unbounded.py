"""Flink 2.3 refusing an unbounded table in BATCH mode (datagen without number-of-rows, as a Kafka table without
scan.bounded.mode):  python sqlconn_batch_unbounded.py OUTDIR  → OUTDIR/sqlconn_batch_unbounded.txt."""

import sys

from pyflink.table import EnvironmentSettings, TableEnvironment

t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
t_env.execute_sql("CREATE TABLE g (id INT) WITH ('connector' = 'datagen')")
try:
    t_env.explain_sql("SELECT * FROM g")
    message = "OK"
except Exception as e:
    text = str(e)
    message = text[text.find("org.apache.flink") :].splitlines()[0]
with open(f"{sys.argv[1]}/sqlconn_batch_unbounded.txt", "w") as out:
    out.write(message + "\n")
