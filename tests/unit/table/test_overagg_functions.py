"""COLLECT's accumulator and its Flink ``HashMap`` order, LAG's accumulator, and the reserved-word alias check."""

from __future__ import annotations

import pytest

from strom.table.errors import SqlParserException
from strom.table.functions.collect_agg_function import (
    CollectAggFunction,
    internal_hash_code,
    java_hash_map_order,
    murmur_hash_bytes,
)
from strom.table.functions.lag_agg_function import LagAggFunction
from strom.table.sql.parser import parse_statement


def test_collect_counts_non_null_values_and_retracts_them() -> None:
    f = CollectAggFunction()
    acc = f.create_accumulator()
    for value in ["x", None, "z", "x"]:
        acc = f.accumulate(acc, value)
    assert f.get_value(acc) == {"x": 2, "z": 1}
    acc = f.retract(f.retract(acc, "z"), "x")
    assert f.get_value(acc) == {"x": 1}
    assert f.get_value(f.merge(acc, {"y": 2})) == {"x": 1, "y": 2}


def test_strings_iterate_in_the_order_of_flinks_hash_map_of_binary_strings() -> None:
    # Flink 2.3 printed COLLECT(DISTINCT k) over a, b, c as {a=1, c=1, b=1} (overagg_collect_distinct.txt)
    assert list(java_hash_map_order({"a": 1, "b": 1, "c": 1})) == ["a", "c", "b"]
    assert list(java_hash_map_order({7: 1, 1: 1, 5: 1, 3: 1})) == [1, 3, 5, 7]
    assert murmur_hash_bytes(b"") == murmur_hash_bytes(b"", 42)
    assert internal_hash_code(True) == 1231 and internal_hash_code(-1) == 0xFFFFFFFF


def test_lag_keeps_the_last_n_plus_one_values_and_falls_back_to_the_default() -> None:
    f = LagAggFunction(3)
    acc = f.create_accumulator()
    seen = []
    for value in [1, 2, 3, 4]:
        acc = f.accumulate(acc, (value, 2, -1))
        seen.append(f.get_value(acc))
    assert seen == [-1, -1, 1, 2]
    assert f.retract(acc, (4, 2, -1)) == acc
    one = LagAggFunction(1)
    assert one.get_value(one.accumulate(one.accumulate(one.create_accumulator(), "a"), "b")) == "a"


@pytest.mark.parametrize("word", ["cube", "PREV", "value", "year", "ln"])
def test_a_reserved_word_as_an_alias_is_refused_with_flinks_parse_error(word: str) -> None:
    with pytest.raises(SqlParserException, match=f'SQL parse failed. Encountered "{word}" at line 2, column 8.'):
        parse_statement(f"SELECT v,\n  x AS {word} FROM g")
    parse_statement(f"SELECT v AS `{word}` FROM g AS first")  # quoted, or a non-reserved word: an identifier
