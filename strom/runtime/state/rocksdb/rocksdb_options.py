"""The RocksDB backend's options, as they travel to the TaskManagers (Flink's ``RocksDBOptions`` read by
``EmbeddedRocksDBStateBackend.configure``): the job's ``state.backend.rocksdb.*`` and managed-memory keys."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from strom.config import CheckpointingOptions, ConfigOption, Configuration, RocksDBOptions, TaskManagerOptions
from strom.exceptions import ConfigurationError
from strom.runtime.state.rocksdb.rocksdb_memory_controller_utils import RocksDBMemoryConfiguration
from strom.runtime.state.rocksdb.rocksdb_priority_queue_set_factory import check_timer_service_factory
from strom.runtime.state.rocksdb.rocksdb_write_cache import ENTRY_BYTES

__all__ = ["COMPACTION_STYLES", "memory_configuration", "state_backend_options", "write_cache_capacity"]

#: ``state.backend.rocksdb.compaction.style`` values (Flink's FIFO drops data: no store of keyed state)
COMPACTION_STYLES = ("LEVEL", "UNIVERSAL")

_KEYS: tuple[ConfigOption[Any], ...] = (
    RocksDBOptions.LOCAL_DIRECTORIES,
    RocksDBOptions.COMPACTION_STYLE,
    RocksDBOptions.TIMER_SERVICE_FACTORY,
    RocksDBOptions.USE_MANAGED_MEMORY,
    RocksDBOptions.WRITE_BUFFER_RATIO,
    RocksDBOptions.HIGH_PRIORITY_POOL_RATIO,
    RocksDBOptions.STATE_CACHE_SIZE,
    RocksDBOptions.MANAGED_MEMORY_SIZE,
    RocksDBOptions.MANAGED_MEMORY_FRACTION,
    RocksDBOptions.PROCESS_MEMORY_SIZE,
    TaskManagerOptions.NUM_TASK_SLOTS,
    CheckpointingOptions.INCREMENTAL_CHECKPOINTS,
)


def state_backend_options(config: Configuration) -> dict[str, Any]:
    """The options a TaskManager's RocksDB backends need, checked (an unknown timer factory is refused here)."""
    style = str(config.get(RocksDBOptions.COMPACTION_STYLE)).strip().upper()
    if style not in COMPACTION_STYLES:
        raise ConfigurationError(
            f"expected {RocksDBOptions.COMPACTION_STYLE.key} to be one of {', '.join(COMPACTION_STYLES)}; got "
            f"{style!r}; hint: LEVEL is RocksDB's default, UNIVERSAL rewrites less per incremental checkpoint"
        )
    options = {option.key: config.get(option) for option in _KEYS}
    factory = RocksDBOptions.TIMER_SERVICE_FACTORY.key
    options[factory] = check_timer_service_factory(options[factory])
    return options


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
