"""Python functions that ``feat_queries.py`` registers by dotted path (``CREATE FUNCTION f AS 'feat_udfs.add_one'``).

Used unchanged by PyFlink 2.3 (through ``python.files``) and by strom's tests (on ``sys.path``).
"""

try:
    from pyflink.table import DataTypes
    from pyflink.table.udf import AggregateFunction, ScalarFunction, udaf, udf, udtf
except ImportError:  # strom's tests
    from strom.table import DataTypes
    from strom.table.udf import AggregateFunction, ScalarFunction, udaf, udf, udtf


@udf(result_type=DataTypes.BIGINT())
def add_one(x):
    return x + 1


@udtf(result_types=[DataTypes.STRING(), DataTypes.INT()])
def split_words(s):
    for w in s.split(" "):
        yield w, len(w)


class Twice(ScalarFunction):
    def eval(self, x):
        return 2 * x


twice = udf(Twice(), result_type=DataTypes.BIGINT())


class LongestLength(AggregateFunction):
    def create_accumulator(self):
        return [0]

    def accumulate(self, acc, s):
        acc[0] = max(acc[0], len(s))

    def get_value(self, acc):
        return acc[0]


longest = udaf(LongestLength(), result_type=DataTypes.INT(), accumulator_type=DataTypes.ARRAY(DataTypes.INT()))
