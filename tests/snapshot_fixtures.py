"""Keyed state for the tests of asynchronous snapshots: fill a backend with every kind of state, mutate all of it
the way a task goes on after a checkpoint's synchronous part, a value that pickles slowly, a reaped-child check."""

from __future__ import annotations

import os
import time
from typing import Any

from strom.api.state import ListStateDescriptor, MapStateDescriptor, StateTtlConfig, ValueStateDescriptor
from strom.runtime.state.heap_keyed_state_backend import HeapKeyedStateBackend


class Slow:
    """Takes ``seconds`` to pickle (in a snapshot's child, where nothing waits on it but the checkpoint)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def __reduce__(self) -> tuple[Any, ...]:
        time.sleep(self.seconds)
        return (Slow, (self.seconds,))


def _descriptors() -> dict[str, Any]:
    ttl_value = ValueStateDescriptor("ttl-v")
    ttl_value.enable_time_to_live(StateTtlConfig(ttl_ms=5_000))
    ttl_list = ListStateDescriptor("ttl-l")
    ttl_list.enable_time_to_live(StateTtlConfig(ttl_ms=5_000))
    return {
        "v": ValueStateDescriptor("v"),
        "l": ListStateDescriptor("l"),
        "m": MapStateDescriptor("m"),
        "ttl-v": ttl_value,
        "ttl-l": ttl_list,
    }


def fill(backend: HeapKeyedStateBackend, keys: int) -> None:
    """Every kind of state for ``keys`` keys: values, lists, maps, a window namespace, TTL, a raw table."""
    s = {name: backend.get_state(d) for name, d in _descriptors().items()}
    table = backend.get_table("_reduce:op")
    for k in range(keys):
        backend.current_key = k
        s["v"].update(("v", k))
        s["l"].add_all([k, [k]])
        s["m"].put_all({"a": k, "b": {"nested": [k]}})
        s["ttl-v"].update(k)
        s["ttl-l"].add(k)
        table[k] = [k, k]
        backend.set_current_namespace(("window", k % 7))
        s["v"].update(("w", k))
        s["l"].add(k)
        backend.set_current_namespace(None)


def mutate(backend: HeapKeyedStateBackend, keys: int) -> None:
    """What a task does after the synchronous part: overwrite, mutate in place, delete, add keys and namespaces."""
    s = {name: backend.get_state(d) for name, d in _descriptors().items()}
    table = backend.get_table("_reduce:op")
    for k in range(keys + 50):
        backend.current_key = k
        s["v"].update(("changed", k))
        if k < keys:
            s["l"].get()  # returns the stored list's elements
            backend.get_table("l")[k][1].append("in place")
            table[k].append("in place")
            backend.get_table("m")[k]["b"]["nested"].append("in place")
        s["l"].add("more")
        s["m"].remove("a")
        s["ttl-v"].update(-k)
        s["ttl-l"].get()
        if k % 3 == 0:
            s["l"].clear()
        backend.set_current_namespace(("window", k % 7))
        s["v"].clear()
        backend.set_current_namespace(("window", "new"))
        s["l"].add(k)
        backend.set_current_namespace(None)


def reaped(pid: int) -> bool:
    """``pid`` is no child of this process any more (exited and waited for): no zombie left."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False
