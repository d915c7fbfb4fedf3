"""Keys land in the key groups Flink puts PyFlink's keys in (issue 30 §2).

The numbers are facts recorded once from Flink 2.3.0's own classes (``MathUtils.murmurHash``, ``Row.hashCode`` of
PyFlink's key row, ``KeyGroupRangeAssignment``) and from PyFlink 2.3.0 runs at parallelism 2 (the subtask each key
of ``k0`` … ``k39`` and ``0`` … ``39`` was processed on); the suite never runs Flink."""

from __future__ import annotations

import pytest

from strom.common import Types
from strom.runtime.state.key_groups import (
    assign_to_key_group,
    compute_operator_index_for_key_group,
    key_group_assigner,
)
from strom.runtime.state.key_hash import flink_key_hash, java_string_hash, murmur_hash

#: PyFlink 2.3.0, parallelism 2, max parallelism 128: the subtask of each key (digit i is key i)
PYFLINK_SUBTASKS = {
    ("str", None): "0101011110110110010100000101010011011111",
    ("str", "STRING"): "0010001011011011001110111010111001010100",
    ("int", None): "0001001000111101100000011000111110111011",
    ("int", "INT"): "0011001011000000011011101110110001110010",
}


@pytest.mark.parametrize(("kind", "declared"), list(PYFLINK_SUBTASKS))
def test_keys_go_to_the_subtasks_pyflink_sends_them_to(kind: str, declared: str | None) -> None:
    key_type = getattr(Types, declared)() if declared else None
    assign = key_group_assigner(128, key_type)
    keys = [f"k{i}" for i in range(40)] if kind == "str" else list(range(40))
    got = "".join(str(compute_operator_index_for_key_group(128, 2, assign(k))) for k in keys)
    assert got == PYFLINK_SUBTASKS[(kind, declared)]


def test_flinks_murmur_hash_and_java_hash_codes() -> None:
    assert murmur_hash(2) == 1085422463
    assert java_string_hash("k0") == 3365 and java_string_hash("ü€😀") == java_string_hash("ü€😀")
    # Row.of(value).hashCode() in Flink 2.3.0: the key row PyFlink's key_by hands to Flink
    row_hash_codes = [
        (Types.STRING(), "k0", 3427),
        (Types.INT(), 5, 67),
        (Types.LONG(), 1 << 40, 318),
        (Types.DOUBLE(), 1.5, 1073217598),
        (Types.FLOAT(), 1.5, 1069547582),
        (Types.BOOLEAN(), True, 1293),
        (Types.SHORT(), 3, 65),
        (Types.TUPLE([Types.INT(), Types.INT()]), (1, 2), 95),
        (Types.ROW([Types.INT()]), (1,), 125),
    ]
    for key_type, key, expected in row_hash_codes:
        assert flink_key_hash(key_type)(key) == expected, (key_type, key)
    assert key_group_assigner(128, Types.STRING())("k0") == 14


def test_untyped_keys_equal_in_python_share_a_key_group() -> None:
    assign = key_group_assigner(128)
    assert assign(1) == assign(1.0) == assign(True) == assign_to_key_group(1, 128)
    assert assign((1, "a")) == assign((True, "a"))
    assert assign(frozenset({"a", "b"})) == assign(frozenset({"b", "a"}))  # no stable pickle: strom's own hash


def test_an_unhashable_key_is_refused_with_a_hint() -> None:
    from strom.exceptions import InvalidProgramError

    with pytest.raises(InvalidProgramError, match="a key must be hashable"):
        key_group_assigner(128)(["a", "list"])


def test_keyed_state_of_strom_0_1_restores_where_its_keys_still_belong() -> None:
    import pickle

    from strom.exceptions import CheckpointError
    from strom.runtime.state.heap_keyed_state_backend import HeapKeyedStateBackend
    from strom.runtime.state.key_groups import KeyGroupRange

    new_group = assign_to_key_group("alice", 128)
    old_group = (new_group + 64) % 128  # where strom 0.1's hash had put it
    blob = pickle.dumps({"version": 1, "meta": {"count": ("value", False)}, "states": {"count": ({"alice": 3}, {})}})
    everything = HeapKeyedStateBackend(max_parallelism=128)
    everything.restore({old_group: blob}, KeyGroupRange(0, 127))  # parallelism 1: every key group is here
    assert everything.get_table("count") == {"alice": 3}
    half = KeyGroupRange(0, 63) if old_group < 64 else KeyGroupRange(64, 127)
    with pytest.raises(CheckpointError, match="restore the checkpoint once at parallelism 1"):
        HeapKeyedStateBackend(max_parallelism=128).restore({old_group: blob}, half)


def test_the_bytes_hash_of_short_and_long_keys_is_javas() -> None:
    import random

    from strom.runtime.state.key_hash import java_bytes_hash

    def arrays_hash_code(b: bytes) -> int:  # Arrays.hashCode(byte[]), as Java writes it
        h = 1
        for x in b:
            h = (31 * h + (x - 256 if x > 127 else x)) & 0xFFFFFFFF
        return h - (1 << 32) if h & 0x80000000 else h

    rng = random.Random(7)
    for n in (0, 1, 2, 31, 255, 256, 257, 5000):
        data = bytes(rng.randrange(256) for _ in range(n))
        assert java_bytes_hash(data) == arrays_hash_code(data), n
