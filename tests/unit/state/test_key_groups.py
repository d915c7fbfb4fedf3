from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from strom.exceptions import InvalidProgramError
from strom.runtime.state.key_groups import (
    assign_key_to_parallel_operator,
    assign_to_key_group,
    compute_key_group_range_for_operator_index,
    compute_operator_index_for_key_group,
    stable_hash,
)

keys = st.one_of(
    st.text(),
    st.integers(),
    st.binary(),
    st.floats(allow_nan=False),
    st.tuples(st.text(), st.integers()),
    st.none(),
    st.booleans(),
)


@given(keys, st.integers(1, 4096))
def test_key_group_in_range(key: object, max_p: int) -> None:
    assert 0 <= assign_to_key_group(key, max_p) < max_p


@given(st.integers(1, 512), st.data())
def test_operator_index_matches_key_group_ranges(max_p: int, data: st.DataObject) -> None:
    p = data.draw(st.integers(1, max_p))
    covered = []
    for i in range(p):
        r = compute_key_group_range_for_operator_index(max_p, p, i)
        for kg in range(r.start, r.end + 1):
            assert compute_operator_index_for_key_group(max_p, p, kg) == i
        covered.extend(range(r.start, r.end + 1))
    assert covered == list(range(max_p))


def test_equal_keys_hash_equal() -> None:
    assert stable_hash(1) == stable_hash(1.0) == stable_hash(True) != stable_hash(2)
    assert stable_hash(("a", 1)) == stable_hash(("a", 1.0))


def test_hash_is_stable_across_processes() -> None:
    """Python salts str hashes per process; routing must not depend on that."""
    code = (
        "from strom.runtime.state.key_groups import assign_key_to_parallel_operator as a;"
        "print([a(k, 128, 4) for k in ['to', 'be', ('x', 3), 42, 'ünïcode', b'raw']])"
    )
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(outs) == 1
    here = str([assign_key_to_parallel_operator(k, 128, 4) for k in ["to", "be", ("x", 3), 42, "ünïcode", b"raw"]])
    assert outs.pop().strip() == here


def test_keys_spread_over_subtasks() -> None:
    counts = [0, 0, 0, 0]
    for i in range(10_000):
        counts[assign_key_to_parallel_operator(f"k{i}", 128, 4)] += 1
    assert min(counts) > 2000


def test_unhashable_key_is_a_clear_error() -> None:
    with pytest.raises(InvalidProgramError, match=r"key must be hashable.*list.*tuple"):
        stable_hash([1, 2])
