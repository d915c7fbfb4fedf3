"""The direct key groups of int keys equal the assigner's (PyFlink's placement), for every pickle layout."""

from __future__ import annotations

import random
from typing import Any

import pytest

from strom.api.typeinfo import TypeInformation, Types
from strom.runtime.state.int_key_groups import int_key_group_assigner, int_key_groups_of
from strom.runtime.state.key_groups import key_group_assigner

_EDGES = [0, 1, 127, 128, 255, 256, 65535, 65536, -1, -128, -129, -256, -65536, 2**31 - 1, -(2**31)]
_BEYOND = [2**31, -(2**31) - 1, 2**40, 2**63 - 1, -(2**63), 2**64, True, False, 3.0, "a", None, (1, 2), b"k"]


def _keys(seed: int) -> list[Any]:
    rnd = random.Random(seed)
    return [*_EDGES, *range(-300, 70_000, 7), *(rnd.randint(-(2**31), 2**31 - 1) for _ in range(20_000))]


@pytest.mark.parametrize("max_parallelism", [1, 7, 128, 32768])
@pytest.mark.parametrize("key_type", [None, Types.PICKLED_BYTE_ARRAY()])
def test_untyped_int_keys_match_the_assigner(max_parallelism: int, key_type: TypeInformation | None) -> None:
    reference = key_group_assigner(max_parallelism, key_type)
    fast = int_key_group_assigner(max_parallelism, key_type, key_group_assigner(max_parallelism, key_type))
    keys = [*_keys(max_parallelism), *_BEYOND]
    assert [fast(k) for k in keys] == [reference(k) for k in keys]


@pytest.mark.parametrize("key_type", [Types.LONG(), Types.INT()])
def test_typed_int_keys_match_the_assigner(key_type: TypeInformation) -> None:
    reference = key_group_assigner(128, key_type)
    fast = int_key_group_assigner(128, key_type, key_group_assigner(128, key_type))
    keys = [*_keys(1), 2**31, 2**40, -(2**63)] if key_type == Types.LONG() else _keys(2)
    assert [fast(k) for k in keys] == [reference(k) for k in keys]


def test_other_key_types_use_the_assigner() -> None:
    reference = key_group_assigner(128, Types.STRING())
    assert int_key_group_assigner(128, Types.STRING(), reference) is reference


@pytest.mark.parametrize("max_parallelism", [1, 7, 128, 32768])
@pytest.mark.parametrize("key_type", [None, Types.PICKLED_BYTE_ARRAY(), Types.LONG(), Types.INT()])
def test_int_keys_placed_at_once_match_the_assigner(max_parallelism: int, key_type: TypeInformation | None) -> None:
    pytest.importorskip("numpy")
    reference = int_key_group_assigner(max_parallelism, key_type, key_group_assigner(max_parallelism, key_type))
    keys = [*_keys(max_parallelism), *([2**31, 2**40, -(2**63), 2**63 - 1] if key_type == Types.LONG() else [])]
    assert int_key_groups_of(keys, max_parallelism, key_type) == [reference(k) for k in keys]


@pytest.mark.parametrize("keys", [[1, 2**31], [1, True], [2**64], ["a", 1], [1, 2.0], []])
def test_keys_not_placed_at_once_are_left_to_the_assigner(keys: list[Any]) -> None:
    assert int_key_groups_of(keys, 128, None) is None
    assert int_key_groups_of([1, 2], 128, Types.STRING()) is None
