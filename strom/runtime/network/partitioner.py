"""Stream partitioners: which output channel (subpartition) each record of a batch goes to.

``route(batch, outs)`` appends every record of ``batch`` to the per-channel lists ``outs`` — one call per
batch, with slicing where the pattern allows, so routing costs little per record. ``route_timestamped``
does the same for a batch with event timestamps, moving each timestamp along with its record into ``touts``.

Pointwise partitioners (forward, rescale) see only the channels their subtask is wired to; the others
see every downstream subtask.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable
from itertools import compress
from operator import not_
from typing import Any

from strom.runtime.state.key_groups import assign_to_key_group, compute_operator_index_for_key_group

Timestamps = list[Any]

__all__ = [
    "BroadcastPartitioner",
    "CustomPartitionerWrapper",
    "ForwardPartitioner",
    "KeyGroupStreamPartitioner",
    "RebalancePartitioner",
    "RescalePartitioner",
    "ShufflePartitioner",
    "StreamPartitioner",
]


class StreamPartitioner(ABC):
    ship_strategy: str = ""
    is_pointwise: bool = False
    is_broadcast: bool = False

    def __init__(self) -> None:
        self.num_channels = 1

    def setup(self, num_channels: int, subtask_index: int) -> None:
        self.num_channels = num_channels

    @abstractmethod
    def route(self, batch: list[Any], outs: list[list[Any]]) -> None: ...

    @abstractmethod
    def route_timestamped(
        self, batch: list[Any], timestamps: Timestamps, outs: list[list[Any]], touts: list[Timestamps]
    ) -> None:
        """``route`` for a batch with event timestamps: each timestamp goes where its record goes."""

    def __repr__(self) -> str:
        return self.ship_strategy


class ForwardPartitioner(StreamPartitioner):
    ship_strategy = "FORWARD"
    is_pointwise = True

    def route(self, batch: list[Any], outs: list[list[Any]]) -> None:
        outs[0].extend(batch)

    def route_timestamped(
        self, batch: list[Any], timestamps: Timestamps, outs: list[list[Any]], touts: list[Timestamps]
    ) -> None:
        outs[0].extend(batch)
        touts[0].extend(timestamps)


class RebalancePartitioner(StreamPartitioner):
    """Round-robin over all channels, starting at a random one (as Flink)."""

    ship_strategy = "REBALANCE"

    def __init__(self) -> None:
        super().__init__()
        self._next = 0

    def setup(self, num_channels: int, subtask_index: int) -> None:
        super().setup(num_channels, subtask_index)
        self._next = random.randrange(num_channels)

    def route(self, batch: list[Any], outs: list[list[Any]]) -> None:
        n = self.num_channels
        if n == 1:
            outs[0].extend(batch)
            return
        start = self._next
        for c in range(n):
            outs[c].extend(batch[(c - start) % n :: n])
        self._next = (start + len(batch)) % n

    def route_timestamped(
        self, batch: list[Any], timestamps: Timestamps, outs: list[list[Any]], touts: list[Timestamps]
    ) -> None:
        n = self.num_channels
        start = self._next
        for c in range(n):
            first = (c - start) % n
            outs[c].extend(batch[first::n])
            touts[c].extend(timestamps[first::n])
        self._next = (start + len(batch)) % n


class RescalePartitioner(RebalancePartitioner):
    """Round-robin over the subset of downstream subtasks this subtask is wired to (pointwise)."""

    ship_strategy = "RESCALE"
    is_pointwise = True


class ShufflePartitioner(StreamPartitioner):
    ship_strategy = "SHUFFLE"

    def __init__(self) -> None:
        super().__init__()
        self._rng = random.Random()

    def route(self, batch: list[Any], outs: list[list[Any]]) -> None:
        n = self.num_channels
        if n == 1:
            outs[0].extend(batch)
            return
        rand = self._rng.randrange
        for v in batch:
            outs[rand(n)].append(v)

    def route_timestamped(
        self, batch: list[Any], timestamps: Timestamps, outs: list[list[Any]], touts: list[Timestamps]
    ) -> None:
        rand = self._rng.randrange
        n = self.num_channels
        for v, t in zip(batch, timestamps, strict=True):
            c = rand(n)
            outs[c].append(v)
            touts[c].append(t)


class BroadcastPartitioner(StreamPartitioner):
    ship_strategy = "BROADCAST"
    is_broadcast = True

    def route(self, batch: list[Any], outs: list[list[Any]]) -> None:
        for out in outs:
            out.extend(batch)

    def route_timestamped(
        self, batch: list[Any], timestamps: Timestamps, outs: list[list[Any]], touts: list[Timestamps]
    ) -> None:
        for out, tout in zip(outs, touts, strict=True):
            out.extend(batch)
            tout.extend(timestamps)


class KeyGroupStreamPartitioner(StreamPartitioner):
    """Routes by key group: ``subtask = key_group * parallelism // max_parallelism``."""

    ship_strategy = "HASH"
    _CACHE_LIMIT = 1 << 18

    def __init__(self, key_selector: Callable[[Any], Any], max_parallelism: int) -> None:
        super().__init__()
        self.key_selector = key_selector
        self.max_parallelism = max_parallelism
        self._cache: dict[Any, int] = {}

    def channel_of_key(self, key: Any) -> int:
        kg = assign_to_key_group(key, self.max_parallelism)
        return compute_operator_index_for_key_group(self.max_parallelism, self.num_channels, kg)

    def route(self, batch: list[Any], outs: list[list[Any]]) -> None:
        n = self.num_channels
        if n == 1:  # every key group belongs to the one consumer
            outs[0].extend(batch)
            return
        channels = self._channels(batch)
        if n == 2:
            outs[0].extend(compress(batch, map(not_, channels)))
            outs[1].extend(compress(batch, channels))
        elif n <= 8:
            for c in range(n):
                outs[c].extend(compress(batch, map(c.__eq__, channels)))
        else:
            for v, c in zip(batch, channels, strict=True):
                outs[c].append(v)

    def route_timestamped(
        self, batch: list[Any], timestamps: Timestamps, outs: list[list[Any]], touts: list[Timestamps]
    ) -> None:
        n = self.num_channels
        if n == 1:
            outs[0].extend(batch)
            touts[0].extend(timestamps)
            return
        channels = self._channels(batch)
        if n == 2:  # the channel numbers are the mask of channel 1; one inverted copy is channel 0's
            rest = list(map(not_, channels))
            outs[0].extend(compress(batch, rest))
            touts[0].extend(compress(timestamps, rest))
            outs[1].extend(compress(batch, channels))
            touts[1].extend(compress(timestamps, channels))
            return
        for c in range(n):
            mask = list(map(c.__eq__, channels))  # one pass per channel, shared by records and timestamps
            outs[c].extend(compress(batch, mask))
            touts[c].extend(compress(timestamps, mask))

    def _channels(self, batch: list[Any]) -> list[int]:
        cache = self._cache
        if len(cache) > self._CACHE_LIMIT:
            cache.clear()
        # the per-record work is the user's key selector; lookups and the split run in C (map/compress)
        keys = list(map(self.key_selector, batch))
        try:
            return list(map(cache.__getitem__, keys))
        except (KeyError, TypeError):  # new keys (or an unhashable one: channel_of_key explains)
            for k in keys:
                try:
                    if k in cache:
                        continue
                except TypeError:
                    self.channel_of_key(k)  # raises with a hint
                cache[k] = self.channel_of_key(k)
            return list(map(cache.__getitem__, keys))


class CustomPartitionerWrapper(StreamPartitioner):
    """``partition_custom(partitioner, key_selector)``: ``partitioner(key, num_partitions) -> int``."""

    ship_strategy = "CUSTOM"

    def __init__(self, partitioner: Callable[[Any, int], int], key_selector: Callable[[Any], Any]) -> None:
        super().__init__()
        self.partitioner = partitioner
        self.key_selector = key_selector

    def route(self, batch: list[Any], outs: list[list[Any]]) -> None:
        for v in batch:
            outs[self._channel(v)].append(v)

    def route_timestamped(
        self, batch: list[Any], timestamps: Timestamps, outs: list[list[Any]], touts: list[Timestamps]
    ) -> None:
        for v, t in zip(batch, timestamps, strict=True):
            c = self._channel(v)
            outs[c].append(v)
            touts[c].append(t)

    def _channel(self, v: Any) -> int:
        n = self.num_channels
        c = self.partitioner(self.key_selector(v), n)
        if type(c) is not int or not 0 <= c < n:
            raise ValueError(
                f"custom partitioner must return an int in [0, {n}); got {c!r} for record {v!r:.80}; "
                "hint: return key_hash % num_partitions"
            )
        return c
