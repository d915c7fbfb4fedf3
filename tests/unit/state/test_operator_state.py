"""Operator (non-keyed) list state and its redistribution on restore."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strom.api.state import ListStateDescriptor, MapStateDescriptor, StateTtlConfig, ValueStateDescriptor
from strom.exceptions import CheckpointError, InvalidProgramError, SerializationError
from strom.runtime.state.operator_state_backend import OperatorStateBackend

pytestmark = pytest.mark.timeout(30)

LIST = ListStateDescriptor("list")
UNION = ListStateDescriptor("union")


def _old_snapshots(per_subtask: list[list[int]]) -> list[bytes | None]:
    blobs: list[bytes | None] = []
    for index, elements in enumerate(per_subtask):
        backend = OperatorStateBackend()
        backend.get_list_state(LIST).update(elements)
        backend.get_union_list_state(UNION).update([("u", index, e) for e in elements])
        blobs.append(backend.snapshot())
    return blobs


def _restore(blobs: list[bytes | None], index: int, parallelism: int) -> OperatorStateBackend:
    backend = OperatorStateBackend()
    backend.restore(blobs, subtask_index=index, parallelism=parallelism)
    return backend


def test_list_state_basics_and_snapshot() -> None:
    backend = OperatorStateBackend()
    assert backend.snapshot() is None
    s = backend.get_list_state(LIST)
    assert s is backend.get_list_state(LIST)
    assert s.get() == []
    s.add(1)
    s.add_all([2, 3])
    s.get().append(99)  # a copy
    assert s.get() == [1, 2, 3]
    blob = backend.snapshot()
    s.update([7])
    s.clear()
    assert s.get() == []
    assert _restore([blob], 0, 1).get_list_state(LIST).get() == [1, 2, 3]


elements_per_subtask = st.integers(1, 6).flatmap(
    lambda n: st.lists(st.lists(st.integers(0, 1000), max_size=8), min_size=n, max_size=n)
)


@settings(max_examples=150, deadline=None)
@given(elements_per_subtask, st.integers(1, 6))
def test_redistribution_loses_and_duplicates_nothing(old: list[list[int]], parallelism: int) -> None:
    tagged = [[i * 10_000 + j for j, _ in enumerate(elements)] for i, elements in enumerate(old)]
    blobs = _old_snapshots(tagged)
    everything = [e for elements in tagged for e in elements]
    shares = []
    for index in range(parallelism):
        backend = _restore(blobs, index, parallelism)
        shares.append(backend.get_list_state(LIST).get())
        union = backend.get_union_list_state(UNION).get()
        assert [e for _, _, e in union] == everything  # union: all of it, in old subtask order
    assert [e for share in shares for e in share] == everything  # split: nothing lost or duplicated
    if parallelism == len(old):
        assert shares == tagged  # same parallelism: every subtask keeps its own
    else:
        sizes = [len(share) for share in shares]
        assert max(sizes) - min(sizes) <= 1 and sizes == sorted(sizes, reverse=True)


def test_restore_before_and_after_registration() -> None:
    blobs = _old_snapshots([[1, 2], [3]])
    late = OperatorStateBackend()
    late.restore(blobs, subtask_index=1, parallelism=2)
    assert late.get_list_state(LIST).get() == [3]
    early = OperatorStateBackend()
    state = early.get_list_state(LIST)
    early.restore(blobs, subtask_index=0, parallelism=2)
    assert state.get() == [1, 2]


def test_restored_state_is_snapshotted_even_if_not_registered_again() -> None:
    restored = _restore(_old_snapshots([[1, 2, 3]]), 0, 1)
    again = _restore([restored.snapshot()], 0, 1)
    assert again.get_list_state(LIST).get() == [1, 2, 3]


def test_old_subtasks_without_state_are_skipped() -> None:
    blobs = [*_old_snapshots([[1]]), None, b""]
    assert _restore(blobs, 0, 1).get_list_state(LIST).get() == [1]
    assert OperatorStateBackend().snapshot() is None


def test_mode_mismatch_is_an_invalid_program() -> None:
    blobs = _old_snapshots([[1]])
    restored = _restore(blobs, 0, 1)
    with pytest.raises(InvalidProgramError, match=r"restored with get_list_state\(\).*new name"):
        restored.get_union_list_state(LIST)
    registered = OperatorStateBackend()
    registered.get_union_list_state(LIST)
    with pytest.raises(InvalidProgramError, match=r"registered with get_union_list_state\(\)"):
        registered.restore(blobs, subtask_index=0, parallelism=1)
    with pytest.raises(InvalidProgramError, match=r"registered with get_union_list_state\(\)"):
        registered.get_list_state(LIST)


def test_operator_state_rejects_keyed_descriptors_and_ttl() -> None:
    backend = OperatorStateBackend()
    with pytest.raises(InvalidProgramError, match="key_by"):
        backend.get_list_state(ValueStateDescriptor("v"))  # type: ignore[arg-type]
    d = ListStateDescriptor("ttl")
    d.enable_time_to_live(StateTtlConfig(ttl_ms=10))
    with pytest.raises(InvalidProgramError, match="keyed state only"):
        backend.get_list_state(d)


def test_bad_restore_arguments_and_blobs() -> None:
    with pytest.raises(CheckpointError, match="subtask_index"):
        OperatorStateBackend().restore([], subtask_index=2, parallelism=2)
    with pytest.raises(SerializationError, match="old subtask 0"):
        OperatorStateBackend().restore([b"junk"], subtask_index=0, parallelism=1)


def test_unpicklable_element_names_the_state() -> None:
    backend = OperatorStateBackend()
    backend.get_list_state(ListStateDescriptor("handles")).add(threading.Lock())
    with pytest.raises(SerializationError, match=r"operator state 'handles'.*'lock'"):
        backend.snapshot()


# --- broadcast state ---------------------------------------------------------------------------------------------

RULES = MapStateDescriptor("rules")


def _broadcast_snapshots(parallelism: int, entries: dict[str, int]) -> list[bytes | None]:
    blobs: list[bytes | None] = []
    for _ in range(parallelism):
        backend = OperatorStateBackend()
        backend.get_broadcast_state(RULES).put_all(entries)
        backend.get_list_state(LIST).update([1])
        blobs.append(backend.snapshot())
    return blobs


@pytest.mark.parametrize(("old", "new"), [(1, 3), (3, 1), (2, 2), (2, 5)])
def test_every_subtask_restores_the_broadcast_state_whatever_the_parallelism(old: int, new: int) -> None:
    blobs = _broadcast_snapshots(old, {"a": 1, "b": 2})
    for i in range(new):
        backend = OperatorStateBackend()
        backend.restore(blobs, subtask_index=i, parallelism=new)
        assert dict(backend.get_broadcast_state(RULES).items()) == {"a": 1, "b": 2}


def test_broadcast_state_is_a_map_and_its_name_cannot_be_a_list_state_too() -> None:
    backend = OperatorStateBackend()
    state = backend.get_broadcast_state(RULES)
    state.put("x", 1)
    state.put_all({"y": 2})
    state.remove("x")
    assert state.items() == [("y", 2)] and state.contains("y") and not state.is_empty()
    assert backend.get_broadcast_state(RULES) is state
    with pytest.raises(InvalidProgramError, match="broadcast state"):
        backend.get_list_state(ListStateDescriptor("rules"))
    with pytest.raises(InvalidProgramError, match="MapStateDescriptor"):
        backend.get_broadcast_state(LIST)  # type: ignore[arg-type]
    state.clear()
    assert state.is_empty()
