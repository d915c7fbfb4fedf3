"""Flink 2.3's refusals of METADATA columns a connector cannot read or write (no Kafka connector needed):
python sqlconn_metadata_errors.py OUTDIR   → OUTDIR/sqlconn_metadata_errors.txt (one message per query)."""

import sys

from pyflink.table import EnvironmentSettings, TableEnvironment

out = sys.argv[1]
t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
t_env.execute_sql(
    "CREATE TABLE g (id INT, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp') WITH ('connector' = 'datagen')"
)
t_env.execute_sql(
    "CREATE TABLE f (id INT, x STRING METADATA FROM 'nope') WITH ('connector' = 'filesystem', "
    "'path' = '/tmp/none', 'format' = 'json')"
)
t_env.execute_sql("CREATE TABLE p (id INT, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp') WITH ('connector' = 'print')")
t_env.execute_sql(
    "CREATE TABLE f2 (id INT, x INT METADATA FROM 'file.path') WITH ('connector' = 'filesystem', "
    "'path' = '/tmp/none', 'format' = 'json')"
)
queries = [
    "SELECT * FROM g",
    "SELECT * FROM f",
    "INSERT INTO p SELECT 1, CAST(NULL AS TIMESTAMP_LTZ(3))",
    "SELECT * FROM f2",
]
with open(f"{out}/sqlconn_metadata_errors.txt", "w") as o:
    for q in queries:
        try:
            t_env.explain_sql(q)
            o.write(f"{q}\tOK\n")
        except Exception as e:
            msg = str(e)
            start = msg.find("org.apache.flink")
            o.write(f"{q}\t{msg.splitlines()[0] if start < 0 else msg[start:].splitlines()[0]}\n")
            rest = [x for x in msg.splitlines() if x.strip() and not x.strip().startswith("at ")]
            o.write("\t" + " | ".join(rest[:6]) + "\n")
