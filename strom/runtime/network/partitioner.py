"""Stream partitioners: which output channel (subpartition) each record of a batch goes to.

``route(batch, outs, touts)`` appends every record of ``batch`` to the per-channel lists ``outs`` — one call per
batch, with slicing where the pattern allows, so routing costs little per record. On a stream with event time
the writer passes ``touts`` too, the per-channel timestamp columns: the batch's timestamps (see
:mod:`strom.runtime.streamrecord`; ``None`` for a record without one) go where their records go. A partitioner
moves each column the same way (:data:`Columns`), so it has one ``route`` for both kinds of batch.

Pointwise partitioners (forward, rescale) see only the channels their subtask is wired to; the others
see every downstream subtask.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable
from itertools import compress
from operator import not_
from typing import TYPE_CHECKING, Any

from strom.runtime.state.key_groups import (
    KeyGroupAssigner,
    compute_operator_index_for_key_group,
    key_group_assigner,
)
from strom.runtime.streamrecord import timestamps_of

if TYPE_CHECKING:
    from strom.api.typeinfo import TypeInformation

#: the columns one ``route`` moves: (records, per-channel lists), then (timestamps, per-channel lists) when the
#: stream carries event time
Columns = tuple[tuple[list[Any], list[list[Any]]], ...]

__all__ = [
    "BroadcastPartitioner",
    "Columns",
    "CustomPartitionerWrapper",
    "ForwardPartitioner",
    "KeyGroupStreamPartitioner",
    "RebalancePartitioner",
    "RescalePartitioner",
    "ShufflePartitioner",
    "StreamPartitioner",
    "columns",
]


def columns(batch: list[Any], outs: list[list[Any]], touts: list[list[Any]] | None) -> Columns:
    """The columns of ``batch`` to route: its records into ``outs``, and, with ``touts``, its timestamps."""
    if touts is None:
        return ((batch, outs),)
    ts = timestamps_of(batch)
    return ((batch, outs), (ts if ts is not None else [None] * len(batch), touts))


def scatter(channels: list[int], cols: Columns) -> None:
    """Append each column's ``i``-th element to the list of channel ``channels[i]``, order kept."""
    if len(cols[0][1]) == 2:  # the channel numbers are the mask of channel 1; an inverted copy is channel 0's
        rest = list(map(not_, channels)) if len(cols) > 1 else map(not_, channels)
        for column, dst in cols:
            dst[0].extend(compress(column, rest))
            dst[1].extend(compress(column, channels))
        return
    for column, dst in cols:
        for v, c in zip(column, channels, strict=True):
            dst[c].append(v)


class StreamPartitioner(ABC):
    ship_strategy: str = ""
    is_pointwise: bool = False
    is_broadcast: bool = False

    def __init__(self) -> None:
        self.num_channels = 1

    def setup(self, num_channels: int, subtask_index: int) -> None:
        self.num_channels = num_channels

    @abstractmethod
    def route(self, batch: list[Any], outs: list[list[Any]], touts: list[list[Any]] | None = None) -> None:
        """Append the records of ``batch`` to their channels' lists in ``outs`` (and, with ``touts``, their
        timestamps to the channels' timestamp lists)."""

    def __repr__(self) -> str:
        return self.ship_strategy


class ForwardPartitioner(StreamPartitioner):
    ship_strategy = "FORWARD"
    is_pointwise = True

    def route(self, batch: list[Any], outs: list[list[Any]], touts: list[list[Any]] | None = None) -> None:
        for column, dst in columns(batch, outs, touts):
            dst[0].extend(column)


class RebalancePartitioner(StreamPartitioner):
    """Round-robin over all channels, starting at a random one (as Flink)."""

    ship_strategy = "REBALANCE"

    def __init__(self) -> None:
        super().__init__()
        self._next = 0

    def setup(self, num_channels: int, subtask_index: int) -> None:
        super().setup(num_channels, subtask_index)
        self._next = random.randrange(num_channels)

    def route(self, batch: list[Any], outs: list[list[Any]], touts: list[list[Any]] | None = None) -> None:
        n = self.num_channels
        start = self._next
        for column, dst in columns(batch, outs, touts):
            if n == 1:
                dst[0].extend(column)
                continue
            for c in range(n):
                dst[c].extend(column[(c - start) % n :: n])
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

    def route(self, batch: list[Any], outs: list[list[Any]], touts: list[list[Any]] | None = None) -> None:
        n = self.num_channels
        cols = columns(batch, outs, touts)
        if n == 1:
            for column, dst in cols:
                dst[0].extend(column)
            return
        rand = self._rng.randrange
        if len(cols) == 1:  # records only: pick and append in one pass
            for v in batch:
                outs[rand(n)].append(v)
            return
        scatter([rand(n) for _ in batch], cols)


class BroadcastPartitioner(StreamPartitioner):
    ship_strategy = "BROADCAST"
    is_broadcast = True

    def route(self, batch: list[Any], outs: list[list[Any]], touts: list[list[Any]] | None = None) -> None:
        for column, dst in columns(batch, outs, touts):
            for out in dst:
                out.extend(column)


class KeyGroupStreamPartitioner(StreamPartitioner):
    """Routes by key group: ``subtask = key_group * parallelism // max_parallelism``."""

    ship_strategy = "HASH"
    _CACHE_LIMIT = 1 << 18

    def __init__(
        self, key_selector: Callable[[Any], Any], max_parallelism: int, key_type: TypeInformation | None = None
    ) -> None:
        super().__init__()
        self.key_selector = key_selector
        self.max_parallelism = max_parallelism
        #: the declared key type (``key_by(..., key_type=)``): keys hash as Flink hashes that type's values
        self.key_type = key_type
        self._cache: dict[Any, int] = {}
        self._key_group_of: KeyGroupAssigner | None = None

    def channel_of_key(self, key: Any) -> int:
        if self._key_group_of is None:  # max_parallelism is set by the StreamGraph, after construction
            self._key_group_of = key_group_assigner(self.max_parallelism, self.key_type)
        kg = self._key_group_of(key)
        return compute_operator_index_for_key_group(self.max_parallelism, self.num_channels, kg)

    def route(self, batch: list[Any], outs: list[list[Any]], touts: list[list[Any]] | None = None) -> None:
        cols = columns(batch, outs, touts)
        if self.num_channels == 1:  # every key group belongs to the one consumer
            for column, dst in cols:
                dst[0].extend(column)
            return
        scatter(self._channels(batch), cols)

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

    def route(self, batch: list[Any], outs: list[list[Any]], touts: list[list[Any]] | None = None) -> None:
        scatter(list(map(self._channel, batch)), columns(batch, outs, touts))

    def _channel(self, v: Any) -> int:
        n = self.num_channels
        c = self.partitioner(self.key_selector(v), n)
        if type(c) is not int or not 0 <= c < n:
            raise ValueError(
                f"custom partitioner must return an int in [0, {n}); got {c!r} for record {v!r:.80}; "
                "hint: return key_hash % num_partitions"
            )
        return c
