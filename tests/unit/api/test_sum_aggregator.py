"""``SumAggregator``: the plain-tuple fast path gives what the field accessor gives, and every other value (named
tuples, lists, short tuples, named fields) still goes through the accessor."""

from __future__ import annotations

from collections import namedtuple

import pytest

from strom.api.aggregations import SumAggregator
from strom.exceptions import InvalidProgramError

Pair = namedtuple("Pair", "key count")


def test_plain_tuples_sum_the_field_and_keep_the_first_records_other_fields() -> None:
    assert SumAggregator(1).reduce(("a", 2, "x"), ("a", 3, "y")) == ("a", 5, "x")
    assert SumAggregator(0).reduce((1.5, "k"), (2.0, "j")) == (3.5, "k")
    assert SumAggregator(2).reduce((1, 2, 3), (4, 5, 6)) == (1, 2, 9)


def test_other_values_and_fields_take_the_accessor() -> None:
    assert SumAggregator(1).reduce(Pair("a", 2), Pair("a", 3)) == Pair("a", 5)
    assert type(SumAggregator(1).reduce(Pair("a", 2), Pair("a", 3))) is Pair
    assert SumAggregator(1).reduce(["a", 2], ["a", 3]) == ["a", 5]
    assert SumAggregator(-1).reduce(("a", 2), ("a", 3)) == ("a", 5)
    assert SumAggregator("count").reduce(Pair("a", 2), Pair("a", 3)) == Pair("a", 5)


def test_a_field_past_the_tuple_is_explained_as_before() -> None:
    with pytest.raises(InvalidProgramError, match="aggregation field 2 does not exist on a tuple"):
        SumAggregator(2).reduce(("a", 2), ("a", 3))
    with pytest.raises(InvalidProgramError, match="aggregation field 2 does not exist on a tuple"):
        SumAggregator(2).reduce(("a", 2, 1), ("a", 3))
