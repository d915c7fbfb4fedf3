"""The program that produced the facts in this directory: run in PyFlink 2.3.0 (``python udaf_queries.py``).

Python aggregate functions (``@udaf``, ``@udtaf``). Each case's
``TableResult.print()`` output (STREAMING, parallelism 1: the exact changelog) goes to ``<name>.txt`` beside this
file; each case runs in a child process so the JVM's stdout holds only its table. strom's test runs this same
program with ``pyflink`` replaced by ``strom``.
"""

import os
import subprocess
import sys

from pyflink.common import Row
from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col
from pyflink.table.udf import AggregateFunction, TableAggregateFunction, udaf, udtaf

HERE = os.path.dirname(os.path.abspath(__file__))


class WeightedAvg(AggregateFunction):
    def create_accumulator(self):
        return [0, 0]

    def get_value(self, accumulator):
        return None if accumulator[1] == 0 else accumulator[0] // accumulator[1]

    def accumulate(self, accumulator, value, weight):
        accumulator[0] += value * weight
        accumulator[1] += weight

    def retract(self, accumulator, value, weight):
        accumulator[0] -= value * weight
        accumulator[1] -= weight

    def merge(self, accumulator, accumulators):
        for other in accumulators:
            accumulator[0] += other[0]
            accumulator[1] += other[1]

    def get_result_type(self):
        return DataTypes.BIGINT()

    def get_accumulator_type(self):
        return DataTypes.ARRAY(DataTypes.BIGINT())


class Top2(TableAggregateFunction):
    def create_accumulator(self):
        return [None, None]

    def accumulate(self, accumulator, value):
        if accumulator[0] is None or value > accumulator[0]:
            accumulator[1] = accumulator[0]
            accumulator[0] = value
        elif accumulator[1] is None or value > accumulator[1]:
            accumulator[1] = value

    def emit_value(self, accumulator):
        for rank, value in enumerate(accumulator):
            if value is not None:
                yield Row(value, rank + 1)

    def get_accumulator_type(self):
        return DataTypes.ARRAY(DataTypes.BIGINT())

    def get_result_type(self):
        return DataTypes.ROW([DataTypes.FIELD("v", DataTypes.BIGINT()), DataTypes.FIELD("rnk", DataTypes.INT())])


ROWS = [(1, "a", 2), (3, "a", 1), (5, "b", 4), (7, "a", 3), (2, "b", 1)]


def environment():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    # Flink's Python aggregate operators emit per bundle; a bundle of one record gives the per-record changelog
    t_env.get_config().set("python.fn-execution.bundle.size", "1")
    source = t_env.from_elements(ROWS, ["v", "k", "w"])
    t_env.create_temporary_view("src", source)
    t_env.create_temporary_system_function("wavg", udaf(WeightedAvg()))
    return t_env, source


def udaf_sql(t_env, source):
    return t_env.execute_sql("SELECT k, wavg(v, w) AS a FROM src GROUP BY k")


def udaf_global_sql(t_env, source):
    return t_env.execute_sql("SELECT wavg(v, w) AS a, COUNT(*) AS n FROM src")


def udaf_table_api(t_env, source):
    f = udaf(WeightedAvg())
    return (
        source.group_by(col("k")).select(col("k"), f(col("v"), col("w")).alias("a"), col("v").sum.alias("s")).execute()
    )


def udtaf_flat_aggregate(t_env, source):
    top2 = udtaf(Top2())
    return source.group_by(col("k")).flat_aggregate(top2(col("v"))).select(col("k"), col("v"), col("rnk")).execute()


CASES = {
    "udaf_sql": udaf_sql,
    "udaf_global_sql": udaf_global_sql,
    "udaf_table_api": udaf_table_api,
    "udtaf_flat_aggregate": udtaf_flat_aggregate,
}


def main():
    if len(sys.argv) > 1:
        t_env, source = environment()
        try:
            CASES[sys.argv[1]](t_env, source).print()
        except Exception as err:
            print(f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}")
        return
    for name in CASES:
        child = subprocess.run([sys.executable, __file__, name], capture_output=True, text=True, check=False)
        with open(os.path.join(HERE, f"{name}.txt"), "w") as out:
            out.write(child.stdout)


if __name__ == "__main__":
    main()
