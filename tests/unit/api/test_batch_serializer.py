"""The default batch serializer: records as values (no memo), cycles and unnamed classes still travel."""

from __future__ import annotations

import pickle
import pickletools

import pytest

from strom.api.serialization import PickleBatchSerializer
from strom.runtime.streamrecord import TimestampedBatch


def roundtrip(batch: list[object]) -> list[object]:
    s = PickleBatchSerializer()
    return s.deserialize(s.serialize(batch))


def test_records_roundtrip_with_their_timestamps() -> None:
    batch = TimestampedBatch([(1, "k1", 2.5, None), (2, "k2", b"x", [1, 2])], [10, None])
    out = roundtrip(batch)
    assert type(out) is TimestampedBatch and out == batch and out.timestamps == [10, None]


def test_records_are_values_objects_shared_between_records_arrive_as_copies() -> None:
    shared = [1, 2]
    out = roundtrip([("a", shared), ("b", shared)])
    assert out == [("a", [1, 2]), ("b", [1, 2])]
    assert out[0][1] is not out[1][1]  # as Flink: each record is serialized on its own


def test_the_fast_pickle_has_no_memo_and_is_smaller_for_distinct_records() -> None:
    batch = [(i, f"k{i}", i * 2, 1_700_000_000_000 + i) for i in range(1000)]
    fast = PickleBatchSerializer().serialize(batch)
    assert pickle.loads(fast) == batch
    assert len(fast) < len(pickle.dumps(batch, protocol=5))
    assert not any(op.name == "MEMOIZE" for op, _, _ in pickletools.genops(fast))


def test_a_cyclic_record_falls_back_to_the_memo_and_keeps_its_cycle() -> None:
    cyclic: list[object] = [1]
    cyclic.append(cyclic)
    out = roundtrip([cyclic, "next"])
    first = out[0]
    assert isinstance(first, list) and first[1] is first and out[1] == "next"


class Local:  # defined in a test module run by pytest: plain pickle can name it
    def __init__(self, v: int) -> None:
        self.v = v


def test_a_class_pickle_cannot_name_goes_through_cloudpickle() -> None:
    unnamed = type("Unnamed", (), {"__module__": "__main__", "__qualname__": "Unnamed"})
    out = roundtrip([unnamed, Local(3)])
    assert out[0].__name__ == "Unnamed"  # type: ignore[attr-defined]
    assert out[1].v == 3  # type: ignore[attr-defined]


def test_an_unpicklable_record_raises() -> None:
    import threading

    with pytest.raises(TypeError):
        PickleBatchSerializer().serialize([threading.Lock()])
