"""Bounded RocksDB memory (Flink's ``RocksDBMemoryControllerUtils`` and ``RocksDBSharedResources``).

With ``state.backend.rocksdb.memory.managed: true`` (the default) every RocksDB instance of a TaskManager process
shares one block ``Cache`` and one ``WriteBufferManager`` charged to that cache, sized by the process's managed
memory (``taskmanager.memory.managed.size``, or ``.fraction`` of ``taskmanager.memory.process.size``): each slot's
share times the slots. As Flink: the write buffers get ``2/3 · write-buffer-ratio`` of the budget and the cache
capacity is ``(3 - write-buffer-ratio) / 3`` of it, because RocksDB lets memtables overshoot the write buffer
manager's limit by up to half of it. Without managed memory each instance has RocksDB's own defaults.

    >>> calculate_actual_cache_capacity(300, 0.5), calculate_write_buffer_manager_capacity(300, 0.5)
    (250, 100)
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from rocksdict import BlockBasedOptions, Cache, Options, WriteBufferManager

__all__ = [
    "RocksDBMemoryConfiguration",
    "RocksDBSharedResources",
    "calculate_actual_cache_capacity",
    "calculate_write_buffer_manager_capacity",
    "column_family_options",
    "shared_resources",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class RocksDBMemoryConfiguration:
    """What bounds RocksDB's memory in one TaskManager process."""

    #: ``state.backend.rocksdb.memory.managed``
    use_managed_memory: bool = True
    #: bytes of managed memory of the process (all its slots)
    managed_memory_bytes: int = 128 << 20
    #: ``state.backend.rocksdb.memory.write-buffer-ratio``
    write_buffer_ratio: float = 0.5
    #: ``state.backend.rocksdb.memory.high-prio-pool-ratio`` (kept for Flink's key; rocksdict's LRU cache has one
    #: pool, so index and filter blocks compete with data blocks)
    high_priority_pool_ratio: float = 0.1


def calculate_actual_cache_capacity(total_memory_bytes: int, write_buffer_ratio: float) -> int:
    return int(total_memory_bytes * (3 - write_buffer_ratio) / 3)


def calculate_write_buffer_manager_capacity(total_memory_bytes: int, write_buffer_ratio: float) -> int:
    return int(2 * total_memory_bytes * write_buffer_ratio / 3)


@dataclass(frozen=True, slots=True)
class RocksDBSharedResources:
    """The cache and write buffer manager every RocksDB instance of the process shares."""

    cache: Cache
    write_buffer_manager: WriteBufferManager
    capacity: int


_lock = threading.Lock()
_shared: dict[tuple[int, float], RocksDBSharedResources] = {}


def shared_resources(config: RocksDBMemoryConfiguration) -> RocksDBSharedResources | None:
    """The process's shared resources for ``config`` (created once); ``None`` without managed memory."""
    if not config.use_managed_memory:
        return None
    key = (config.managed_memory_bytes, config.write_buffer_ratio)
    with _lock:
        found = _shared.get(key)
        if found is None:
            total = config.managed_memory_bytes
            cache = Cache(calculate_actual_cache_capacity(total, config.write_buffer_ratio))
            wbm = WriteBufferManager.new_write_buffer_manager_with_cache(
                calculate_write_buffer_manager_capacity(total, config.write_buffer_ratio), False, cache
            )
            found = _shared[key] = RocksDBSharedResources(cache, wbm, total)
        return found


def column_family_options(resources: RocksDBSharedResources | None) -> Options:
    """Options of the DB and of each column family: raw bytes, and the shared cache and write buffers."""
    options = Options(raw_mode=True)
    options.create_if_missing(True)
    options.create_missing_column_families(True)
    options.set_max_background_jobs(2)
    options.set_keep_log_file_num(2)
    if resources is not None:
        table = BlockBasedOptions()
        table.set_block_cache(resources.cache)
        table.set_cache_index_and_filter_blocks(True)
        table.set_pin_l0_filter_and_index_blocks_in_cache(True)
        table.set_bloom_filter(10, False)
        options.set_block_based_table_factory(table)
        options.set_write_buffer_manager(resources.write_buffer_manager)
        # a column family's memtable: at most a slice of the shared budget (Flink: arena block ≤ mutable limit)
        options.set_write_buffer_size(max(1 << 20, min(64 << 20, resources.capacity // 8)))
    return options
