"""``state.backend.type``: the seam keyed operators get their state store from."""

from __future__ import annotations

import pytest

from strom import Configuration, StreamExecutionEnvironment, ValueStateDescriptor
from strom.exceptions import ConfigurationError
from strom.runtime.state.heap_keyed_state_backend import HeapKeyedStateBackend
from strom.runtime.state.state_backend import create_keyed_state_backend

pytestmark = pytest.mark.timeout(30)


def test_hashmap_is_the_default_and_keeps_state_per_key() -> None:
    backend = create_keyed_state_backend(" HashMap ", max_parallelism=128)
    assert isinstance(backend, HeapKeyedStateBackend)
    state = backend.get_state(ValueStateDescriptor("v"))
    backend.set_current_key("a")
    state.update(1)
    backend.set_current_key("b")
    assert state.value() is None
    restored = create_keyed_state_backend("hashmap", max_parallelism=128)
    restored.restore(backend.snapshot())
    restored.set_current_key("a")
    assert restored.get_state(ValueStateDescriptor("v")).value() == 1


def test_an_unknown_backend_is_refused_when_the_job_is_built() -> None:
    env = StreamExecutionEnvironment.get_execution_environment(Configuration({"state.backend.type": "forst"}))
    env.from_collection([1, 2]).key_by(lambda x: x).reduce(lambda a, b: a + b).print()
    with pytest.raises(
        ConfigurationError, match=r"expected state\.backend\.type to be one of hashmap, rocksdb; got 'forst'"
    ):
        env.get_job_graph()
