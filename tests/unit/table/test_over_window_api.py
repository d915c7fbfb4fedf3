"""PyFlink's ``Over`` windows of the Table API (``strom.table.window``): the OVER clause each builder chain stands
for, and the errors of a wrong bound; ``table.<column>`` as PyFlink's ``Table.__getattr__``."""

from __future__ import annotations

import pytest

from strom.table import EnvironmentSettings, TableEnvironment
from strom.table.errors import ValidationException
from strom.table.expressions import CURRENT_ROW, UNBOUNDED_RANGE, UNBOUNDED_ROW, col, lit, row_interval
from strom.table.window import Over


def test_over_windows_are_the_sql_over_clauses_they_stand_for() -> None:
    rows = Over.partition_by(col("name")).order_by(col("ts")).preceding(row_interval(2)).following(CURRENT_ROW)
    assert rows.alias("w").over_clause() == (
        "(PARTITION BY `name` ORDER BY `ts` ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)"
    )
    ranged = Over.partition_by(col("k")).order_by(col("ts")).preceding(lit(1).hours).alias("w")
    assert (
        ranged.over_clause()
        == "(PARTITION BY `k` ORDER BY `ts` RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW)"
    )
    assert Over.order_by(col("ts")).preceding(UNBOUNDED_ROW).alias("w").over_clause() == (
        "(ORDER BY `ts` ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)"
    )
    assert Over.order_by(col("ts")).preceding(UNBOUNDED_RANGE).alias("w").rows is False
    assert Over.order_by(col("ts")).alias("w").over_clause() == (
        "(ORDER BY `ts` RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)"
    )


def test_a_wrong_bound_says_what_is_expected() -> None:
    with pytest.raises(ValidationException, match=r"Over\.preceding: expected row_interval\(n\)"):
        Over.order_by(col("ts")).preceding(lit("x"))
    with pytest.raises(ValidationException, match=r"Over\.following: expected CURRENT_ROW or CURRENT_RANGE"):
        Over.order_by(col("ts")).preceding(row_interval(1)).following(row_interval(1))


def test_a_column_by_attribute_and_a_missing_one() -> None:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    table = t_env.from_elements([(1, "a")], ["id", "data"])
    assert str(table.data) == str(col("data"))
    with pytest.raises(AttributeError, match=r"no column named 'nope', available columns: \[id, data\]"):
        _ = table.nope
