"""The keyed state backend contract runs over every backend: ``make_backend`` builds one of the backend the test
is parametrized with (``hashmap``, ``rocksdb``); RocksDB instances live in the test's tmp dir and are disposed."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from strom.runtime.state.heap_keyed_state_backend import HeapKeyedStateBackend
from strom.runtime.state.rocksdb.rocksdb_keyed_state_backend import RocksDBKeyedStateBackend

BACKENDS = ("hashmap", "rocksdb")
MakeBackend = Callable[..., Any]


def backend_factory(kind: str, tmp_path: Path, made: list[Any]) -> MakeBackend:
    def make(*, max_parallelism: int = 128, ttl_time_provider: Callable[[], int] | None = None) -> Any:
        if kind == "hashmap":
            return HeapKeyedStateBackend(max_parallelism=max_parallelism, ttl_time_provider=ttl_time_provider)
        backend = RocksDBKeyedStateBackend(
            max_parallelism=max_parallelism, path=str(tmp_path / f"db-{len(made)}"), ttl_time_provider=ttl_time_provider
        )
        made.append(backend)
        return backend

    return make


@pytest.fixture(params=BACKENDS)
def backend_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def make_backend(backend_kind: str, tmp_path: Path) -> Iterator[MakeBackend]:
    made: list[Any] = []
    yield backend_factory(backend_kind, tmp_path, made)
    for backend in made:
        backend.dispose()


@pytest.fixture
def make_any_backend(tmp_path: Path) -> Iterator[Callable[[str], MakeBackend]]:
    """``make_any_backend(kind)(max_parallelism=...)``: backends of both kinds in one test (cross-backend restore)."""
    made: list[Any] = []
    yield lambda kind: backend_factory(kind, tmp_path, made)
    for backend in made:
        backend.dispose()
