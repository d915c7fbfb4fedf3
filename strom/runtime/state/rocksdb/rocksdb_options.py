"""The RocksDB backend's options, as they travel to the TaskManagers (Flink's ``RocksDBOptions`` read by
``EmbeddedRocksDBStateBackend.configure``): the job's ``state.backend.rocksdb.*`` and managed-memory keys."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from strom.config import ConfigOption, Configuration, RocksDBOptions, TaskManagerOptions
from strom.exceptions import ConfigurationError
from strom.runtime.state.rocksdb.rocksdb_memory_controller_utils import RocksDBMemoryConfiguration
from strom.runtime.state.rocksdb.rocksdb_write_cache import ENTRY_BYTES

__all__ = ["memory_configuration", "state_backend_options", "write_cache_capacity"]

_KEYS: tuple[ConfigOption[Any], ...] = (
    RocksDBOptions.LOCAL_DIRECTORIES,
    RocksDBOptions.TIMER_SERVICE_FACTORY,
    RocksDBOptions.USE_MANAGED_MEMORY,
    RocksDBOptions.WRITE_BUFFER_RATIO,
    RocksDBOptions.HIGH_PRIORITY_POOL_RATIO,
    RocksDBOptions.STATE_CACHE_SIZE,
    RocksDBOptions.MANAGED_MEMORY_SIZE,
    RocksDBOptions.MANAGED_MEMORY_FRACTION,
    RocksDBOptions.PROCESS_MEMORY_SIZE,
    TaskManagerOptions.NUM_TASK_SLOTS,
)


def state_backend_options(config: Configuration) -> dict[str, Any]:
    """The options a TaskManager's RocksDB backends need, checked (an unknown timer factory is refused here)."""
    factory = str(config.get(RocksDBOptions.TIMER_SERVICE_FACTORY)).strip().upper()
    if factory != "HEAP":
        raise ConfigurationError(
            f"expected {RocksDBOptions.TIMER_SERVICE_FACTORY.key} to be HEAP; got {factory!r}; hint: timers in RocksDB "
            "(Flink's default ROCKSDB) are not built yet — HEAP keeps them on the heap and checkpoints them with "
            "the keyed state"
        )
    return {option.key: config.get(option) for option in _KEYS}


def _managed_bytes(config: Configuration) -> int:
    """The process's managed memory (Flink's: size, or fraction of the process memory)."""
    managed = config.get(RocksDBOptions.MANAGED_MEMORY_SIZE)
    if not managed:
        fraction = config.get(RocksDBOptions.MANAGED_MEMORY_FRACTION)
        managed = int(config.get(RocksDBOptions.PROCESS_MEMORY_SIZE) * fraction)
    return max(8 << 20, int(managed))


def write_cache_capacity(options: Mapping[str, Any]) -> int:
    """Entries of a backend's write cache: ``python.state.cache-size``, at most a quarter of the
    slot's share of the managed memory at :data:`ENTRY_BYTES` an entry."""
    config = Configuration(dict(options))
    configured = int(config.get(RocksDBOptions.STATE_CACHE_SIZE))
    slots = max(1, int(config.get(TaskManagerOptions.NUM_TASK_SLOTS)))
    return max(0, min(configured, _managed_bytes(config) // slots // 4 // ENTRY_BYTES))


def memory_configuration(options: Mapping[str, Any]) -> RocksDBMemoryConfiguration:
    """The process's RocksDB memory bound from the options: the managed memory, less the quarter left to the write
    caches when they are on."""
    config = Configuration(dict(options))
    managed = _managed_bytes(config)
    if write_cache_capacity(options) > 0:
        managed -= managed // 4
    return RocksDBMemoryConfiguration(
        use_managed_memory=config.get(RocksDBOptions.USE_MANAGED_MEMORY),
        managed_memory_bytes=managed,
        write_buffer_ratio=config.get(RocksDBOptions.WRITE_BUFFER_RATIO),
        high_priority_pool_ratio=config.get(RocksDBOptions.HIGH_PRIORITY_POOL_RATIO),
    )
