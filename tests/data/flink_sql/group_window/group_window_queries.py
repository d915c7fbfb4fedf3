"""The program that produced the facts in this directory: run in PyFlink 2.3.0 (``python group_window_queries.py``).

The Table API's group windows (``pyflink.table.window``'s ``Tumble``, ``Slide``, ``Session``) over an event-time
table. Each case's ``TableResult.print()`` output (STREAMING, parallelism 1) goes to ``<name>.txt`` beside this file;
each case runs in a child process so the JVM's stdout holds only its table. strom's test runs this same program
with ``pyflink`` replaced by ``strom``.
"""

import os
import subprocess
import sys

from pyflink.table import EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col, lit
from pyflink.table.window import Session, Slide, Tumble

HERE = os.path.dirname(os.path.abspath(__file__))
EVENTS = "/tmp/strom-flink-facts-group-window.csv"
EVENT_ROWS = [
    ("a", 1, "2024-01-01 00:00:00.100"),
    ("b", 2, "2024-01-01 00:00:00.500"),
    ("a", 3, "2024-01-01 00:00:01.200"),
    ("a", 4, "2024-01-01 00:00:03.000"),
    ("b", 5, "2024-01-01 00:00:03.500"),
    ("a", 6, "2024-01-01 00:00:07.000"),
]
SETUP = (
    "CREATE TABLE events (k STRING, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) "
    "WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv')"
)


def environment(path=EVENTS):
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    t_env.execute_sql(SETUP.format(path=path))
    return t_env, t_env.from_path("events")


def tumble(t_env, events):
    return (
        events.window(Tumble.over(lit(1).seconds).on(col("ts")).alias("w"))
        .group_by(col("w"), col("k"))
        .select(col("k"), col("w").start, col("w").end, col("v").sum.alias("total"))
        .execute()
    )


def slide(t_env, events):
    return (
        events.window(Slide.over(lit(2).seconds).every(lit(1).seconds).on(col("ts")).alias("w"))
        .group_by(col("k"), col("w"))
        .select(col("k"), col("w").start.alias("s"), col("w").end.alias("e"), col("v").count.alias("n"))
        .execute()
    )


def session(t_env, events):
    return (
        events.window(Session.with_gap(lit(2).seconds).on(col("ts")).alias("w"))
        .group_by(col("w"), col("k"))
        .select(col("k"), col("w").start.alias("s"), col("w").end.alias("e"), col("v").max.alias("hi"))
        .execute()
    )


def global_tumble(t_env, events):
    return (
        events.window(Tumble.over(lit(2).seconds).on(col("ts")).alias("w"))
        .group_by(col("w"))
        .select(col("w").start.alias("s"), col("w").rowtime.alias("t"), col("v").sum.alias("total"))
        .execute()
    )


CASES = {"tumble": tumble, "slide": slide, "session": session, "global_tumble": global_tumble}


def main():
    if len(sys.argv) > 1:
        t_env, events = environment()
        try:
            CASES[sys.argv[1]](t_env, events).print()
        except Exception as err:
            print(f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}")
        return
    with open(EVENTS, "w") as out:
        out.write("".join(f"{k},{v},{ts}\n" for k, v, ts in EVENT_ROWS))
    for name in CASES:
        child = subprocess.run([sys.executable, __file__, name], capture_output=True, text=True, check=False)
        with open(os.path.join(HERE, f"{name}.txt"), "w") as out:
            out.write(child.stdout)


if __name__ == "__main__":
    main()
