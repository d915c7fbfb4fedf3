"""Operator (non-keyed) list state and its redistribution on restore."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strom.api.state import ListStateDescriptor, StateTtlConfig, ValueStateDescriptor
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
