"""The timer contract over every place timers live (``state.backend.rocksdb.timer-service.factory``): the heap
backend, RocksDB with ``HEAP`` timers and RocksDB with ``ROCKSDB`` timers (a column family per queue, Flink's
``RocksDBPriorityQueueSetFactory``): order, set semantics, deletes, key-group layout, and snapshots that restore
into any factory at any parallelism."""

from __future__ import annotations

import random
import tempfile
from collections.abc import Iterator
from typing import Any, NamedTuple

import pytest

from strom.runtime.operators.timer_service import InternalTimer, InternalTimerService
from strom.runtime.state.heap_keyed_state_backend import HeapKeyedStateBackend
from strom.runtime.state.key_groups import compute_key_group_range_for_operator_index
from strom.runtime.state.rocksdb.key_group_partitioned_priority_queue import KeyGroupPartitionedPriorityQueue
from strom.runtime.state.rocksdb.rocksdb_keyed_state_backend import RocksDBKeyedStateBackend
from strom.runtime.state.rocksdb.rocksdb_priority_queue_set_factory import RocksDBTimerQueue
from strom.runtime.tasks.processing_time_service import ProcessingTimeService

pytestmark = pytest.mark.timeout(60)

FACTORIES = ["hashmap", "rocksdb-HEAP", "rocksdb-ROCKSDB"]
MAX_PARALLELISM = 128


def make_backend(factory: str) -> Any:
    if factory == "hashmap":
        return HeapKeyedStateBackend(max_parallelism=MAX_PARALLELISM)
    return RocksDBKeyedStateBackend(
        max_parallelism=MAX_PARALLELISM,
        path=tempfile.mkdtemp(prefix="strom-timers-test-"),
        timer_service_factory=factory.split("-")[1],
    )


class Fired:
    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.event: list[tuple[int, Any, Any]] = []
        self.processing: list[tuple[int, Any, Any]] = []
        self.on_event: Any = None

    def on_event_time(self, timer: InternalTimer) -> None:
        assert self.backend.current_key == timer.key  # the timer's key is current in its callback
        self.event.append((timer.timestamp, timer.key, timer.namespace))
        if self.on_event is not None:
            self.on_event(timer)

    def on_processing_time(self, timer: InternalTimer) -> None:
        self.processing.append((timer.timestamp, timer.key, timer.namespace))


class Setup(NamedTuple):
    backend: Any
    service: InternalTimerService
    fired: Fired
    now: list[int]


@pytest.fixture(params=FACTORIES)
def setup(request: pytest.FixtureRequest) -> Iterator[Setup]:
    yield from _setup(request.param)


def _setup(factory: str, backend: Any = None) -> Iterator[Setup]:
    backend = backend if backend is not None else make_backend(factory)
    now = [0]
    fired = Fired(backend)
    service = InternalTimerService("user-timers", backend, ProcessingTimeService(clock=lambda: now[0]), fired)
    try:
        yield Setup(backend, service, fired, now)
    finally:
        if hasattr(backend, "dispose"):
            backend.dispose()


def register(s: Setup, key: Any, namespace: Any, time: int, processing: bool = False) -> None:
    s.backend.current_key = key
    if processing:
        s.service.register_processing_time_timer(namespace, time)
    else:
        s.service.register_event_time_timer(namespace, time)


def test_event_time_timers_fire_in_order_of_time_up_to_the_watermark(setup: Setup) -> None:
    rng = random.Random(3)
    timers = {(rng.randrange(-5000, 5000), f"k{rng.randrange(300)}", rng.choice([None, "ns", 7])) for _ in range(3000)}
    timers |= {(-(1 << 63) + 1, "min", None), ((1 << 63) - 2, "max", None)}
    for t, k, ns in timers:
        register(setup, k, ns, t)
    assert setup.service.num_event_time_timers() == len(timers)
    setup.service.advance_watermark(0)
    first = list(setup.fired.event)
    assert [t for t, _, _ in first] == sorted(t for t, _, _ in first)
    assert set(first) == {x for x in timers if x[0] <= 0}
    setup.service.advance_watermark((1 << 63) - 1)
    rest = setup.fired.event[len(first) :]
    assert [t for t, _, _ in rest] == sorted(t for t, _, _ in rest)
    assert set(setup.fired.event) == timers and len(setup.fired.event) == len(timers)
    assert setup.service.num_event_time_timers() == 0


def test_a_timer_is_a_set_member_and_deletes_are_exact(setup: Setup) -> None:
    for _ in range(3):
        register(setup, "a", None, 10)
    register(setup, "a", "w", 10)
    register(setup, "b", None, 10)
    register(setup, "a", None, 11)
    assert setup.service.num_event_time_timers() == 4
    setup.backend.current_key = "a"
    setup.service.delete_event_time_timer(None, 10)
    setup.service.delete_event_time_timer(None, 99)  # absent: nothing happens
    setup.service.advance_watermark(100)
    assert sorted(setup.fired.event, key=repr) == sorted([(10, "a", "w"), (10, "b", None), (11, "a", None)], key=repr)


def test_callbacks_register_and_delete_timers_while_firing(setup: Setup) -> None:
    register(setup, "a", None, 5)
    register(setup, "b", None, 20)

    def on_event(timer: InternalTimer) -> None:
        if timer.key == "a" and timer.timestamp == 5:
            setup.service.register_event_time_timer(None, 7)  # due within this advance: fires in it
            setup.service.register_event_time_timer(None, 50)  # not due
            setup.backend.current_key = "b"
            setup.service.delete_event_time_timer(None, 20)

    setup.fired.on_event = on_event
    setup.service.advance_watermark(30)
    assert setup.fired.event == [(5, "a", None), (7, "a", None)]
    setup.service.advance_watermark(60)
    assert setup.fired.event[-1] == (50, "a", None)


def test_processing_time_timers_fire_when_the_clock_reaches_them(setup: Setup) -> None:
    for t, k in [(300, "a"), (100, "b"), (200, "c"), (100, "b")]:
        register(setup, k, None, t, processing=True)
    pts = setup.service.processing_time_service
    setup.now[0] = 150
    pts.fire_due()
    assert setup.fired.processing == [(100, "b", None)]
    setup.now[0] = 1000
    pts.fire_due()
    assert setup.fired.processing == [(100, "b", None), (200, "c", None), (300, "a", None)]


class Point(NamedTuple):
    x: int
    y: str


def test_the_callback_sees_the_key_object_it_was_registered_with(setup: Setup) -> None:
    register(setup, Point(1, "a"), None, 1)
    register(setup, 2.5, None, 2)
    register(setup, ("t", 1), None, 3)
    setup.service.advance_watermark(10)
    keys = [k for _, k, _ in setup.fired.event]
    assert keys == [Point(1, "a"), 2.5, ("t", 1)] and type(keys[0]) is Point


def test_rocksdb_timers_are_ordered_by_key_group_then_time_in_their_column_family() -> None:
    for s in _setup("rocksdb-ROCKSDB"):
        for i in range(500):
            register(s, i % 50, None, (i * 7919) % 1000 - 500)
        queue = s.service._event
        assert isinstance(queue, RocksDBTimerQueue)
        raw = [element for element, _ in queue.queue.items()]
        groups = [(e[0] << 8) | e[1] for e in raw]
        assert groups == sorted(groups)  # each key group one contiguous range
        for kg in set(groups):
            # the timestamp follows the key group: 8 bytes big-endian, sign bit flipped
            times = [int.from_bytes(e[2:10], "big") - (1 << 63) for e, g in zip(raw, groups, strict=True) if g == kg]
            assert times == sorted(times)
        assert queue.queue.key_groups() == sorted(set(groups))
        assert all(s.backend.key_group_of(i) in set(groups) for i in range(50))


@pytest.mark.parametrize("capacity", [1, 2, 5])
def test_the_key_group_partitioned_queue_matches_a_sorted_set_under_random_operations(capacity: int) -> None:
    from rocksdict import Options, Rdict

    db = Rdict(tempfile.mkdtemp(prefix="strom-pq-test-"), Options(raw_mode=True))
    try:
        rng = random.Random(capacity)
        queue = KeyGroupPartitionedPriorityQueue(db, known_empty=True, capacity=capacity)
        reference: set[bytes] = set()
        for step in range(3000):
            element = bytes([0, rng.randrange(4)]) + bytes([rng.randrange(30)])
            op = rng.random()
            if op < 0.5:
                queue.add(element)
                reference.add(element)
            elif op < 0.75:
                queue.remove(element)
                reference.discard(element)
            else:
                expected = min(reference, key=lambda e: (e[2:], e[:2])) if reference else None
                assert queue.poll() == expected, f"step {step}"
                reference.discard(expected)  # type: ignore[arg-type]
            queue.validate()
        assert len(queue) == len(reference)
        reopened = KeyGroupPartitionedPriorityQueue(db, known_empty=False, capacity=capacity)  # taken over from disk
        drained = [reopened.poll() for _ in range(len(reference))]
        assert drained == sorted(reference, key=lambda e: (e[2:], e[:2])) and reopened.poll() is None
    finally:
        db.close()


@pytest.mark.parametrize("before", FACTORIES)
@pytest.mark.parametrize("after", FACTORIES)
def test_a_snapshot_restores_into_any_factory_at_another_parallelism(before: str, after: str) -> None:
    timers = {(t, f"k{t % 97}", ("w", t // 10)) for t in range(0, 2000, 3)}
    processing = {(10_000 + t, f"p{t}", None) for t in range(40)}
    for s in _setup(before):
        for t, k, ns in timers:
            register(s, k, ns, t)
        for t, k, ns in processing:
            register(s, k, ns, t, processing=True)
        s.service.advance_watermark(99)  # some fired before the snapshot
        s.service.write_to_backend()
        blobs = s.backend.snapshot()
        s.service.remove_from_backend()
        assert s.service.num_event_time_timers() == len({x for x in timers if x[0] > 99})  # the snapshot took none
    fired: list[tuple[int, Any, Any]] = []
    fired_processing: list[tuple[int, Any, Any]] = []
    for index in range(3):
        owned = compute_key_group_range_for_operator_index(MAX_PARALLELISM, 3, index)
        backend = make_backend(after)
        backend.restore({kg: blob for kg, blob in blobs.items() if kg in owned}, owned)
        for s in _setup(after, backend):
            s.service.read_from_backend()
            s.service.advance_watermark(1 << 40)
            assert all(backend.key_group_of(k) in owned for _, k, _ in s.fired.event)
            fired += s.fired.event
            s.now[0] = 1 << 40
            s.service.processing_time_service.fire_due()
            fired_processing += s.fired.processing
    assert sorted(fired) == sorted(x for x in timers if x[0] > 99)
    assert sorted(fired_processing, key=repr) == sorted(processing, key=repr)
