"""PyFlink's row-based operations: ``Table.map`` with the input row as a named ``Row``,
``group_by().aggregate(udaf)`` with a ROW result, ``flat_aggregate(udtaf)`` without arguments (each row passed
whole), checked as final tables (their changelogs differ from PyFlink's bundled Python operators, see docs/sql.md)."""

from __future__ import annotations

from typing import Any

from strom.common import Row
from strom.table import DataTypes, EnvironmentSettings, TableEnvironment
from strom.table.expressions import col
from strom.table.table_result import materialize
from strom.table.udf import AggregateFunction, TableAggregateFunction, udaf, udf, udtaf, udtf

_COUNTRY_ROW = DataTypes.ROW([DataTypes.FIELD("cnt", DataTypes.BIGINT()), DataTypes.FIELD("total", DataTypes.BIGINT())])


class CountAndSum(AggregateFunction):
    def create_accumulator(self) -> Any:
        return Row(0, 0)

    def accumulate(self, accumulator: Any, row: Any) -> None:
        accumulator[0] += 1
        accumulator[1] += row.tel

    def retract(self, accumulator: Any, row: Any) -> None:
        accumulator[0] -= 1
        accumulator[1] -= row.tel

    def get_value(self, accumulator: Any) -> Any:
        return Row(accumulator[0], accumulator[1])

    def get_result_type(self) -> Any:
        return _COUNTRY_ROW


class Largest(TableAggregateFunction):
    def create_accumulator(self) -> Any:
        return [None]

    def accumulate(self, accumulator: Any, row: Any) -> None:
        if accumulator[0] is None or row.tel > accumulator[0]:
            accumulator[0] = row.tel

    def emit_value(self, accumulator: Any) -> Any:
        yield Row(accumulator[0])

    def get_result_type(self) -> Any:
        return DataTypes.ROW([DataTypes.FIELD("tel", DataTypes.BIGINT())])


def _table() -> Any:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    rows = [(1, "China", 135), (2, "Germany", 123), (3, "China", 32), (4, "China", 124)]
    return t_env.from_elements(rows, ["id", "country", "tel"])


def _final(table: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r._values) for r in materialize(iter(table.execute().collect())))


def test_aggregate_with_row_result_and_whole_row_argument() -> None:
    aggregated = _table().group_by(col("country")).aggregate(udaf(CountAndSum()).alias("cnt", "total"))
    assert _final(aggregated.select(col("country"), col("cnt"), col("total"))) == [
        ("China", 3, 291),
        ("Germany", 1, 123),
    ]


def test_flat_aggregate_with_whole_row_argument() -> None:
    flat = _table().group_by(col("country")).flat_aggregate(udtaf(Largest()))
    assert _final(flat.select(col("country"), col("tel"))) == [("China", 135), ("Germany", 123)]


def test_map_gets_named_rows() -> None:
    @udf(
        result_type=DataTypes.ROW([DataTypes.FIELD("id", DataTypes.BIGINT()), DataTypes.FIELD("c", DataTypes.STRING())])
    )
    def first_letter(row: Row) -> Row:
        return Row(row.id, row.country[0])

    mapped = _table().map(first_letter)
    assert mapped.get_schema().names == ("id", "c")
    assert _final(mapped) == [(1, "C"), (2, "G"), (3, "C"), (4, "C")]


def test_join_lateral_called_on_columns_or_on_the_whole_row() -> None:
    @udtf(result_types=[DataTypes.STRING()])
    def halves(country: str) -> Any:
        yield country[:2]
        yield country[2:4]

    @udtf(result_types=[DataTypes.BIGINT()])
    def doubled(row: Row) -> Any:
        yield row.tel * 2

    table = _table().filter(col("id") < 3)
    assert _final(table.join_lateral(halves(col("country")).alias("h"))) == [
        (1, "China", 135, "Ch"),
        (1, "China", 135, "in"),
        (2, "Germany", 123, "Ge"),
        (2, "Germany", 123, "rm"),
    ]
    lateral = table.join_lateral(doubled.alias("d"))
    assert lateral.get_schema().names == ("id", "country", "tel", "d")
    assert _final(lateral) == [(1, "China", 135, 270), (2, "Germany", 123, 246)]
