"""Processing-time temporal joins (``JOIN t FOR SYSTEM_TIME AS OF o.pt``, ``pt AS PROCTIME()``) planned as lookup
joins against a :class:`~strom.table.connectors.lookup.LookupTableSource` (here the in-memory one, registered as
a ``'test-lookup'`` connector for the test): INNER and LEFT, a residual condition, NULL keys, the PARTIAL cache;
and the refusal of a table that cannot look rows up."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from strom.table import EnvironmentSettings, TableEnvironment
from strom.table.connectors import factory
from strom.table.connectors.lookup import InMemoryLookupTableSource, LookupCacheOptions, parse_duration_ms
from strom.table.errors import TableException
from strom.table.runtime.lookup_cache import LookupCache

ORDERS = Path(__file__).parents[2] / "data" / "flink_sql" / "temporal" / "orders.csv"
RATES = [("EUR", 119, "euro"), ("USD", 102, "dollar"), ("GBP", 90, "pound")]


@pytest.fixture(autouse=True)
def _lookup_connector(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    known = factory._factories()

    def factories() -> dict[str, Any]:
        source = (lambda name, table, row_type: InMemoryLookupTableSource(RATES, table.options), None)
        return {**known, "test-lookup": source}

    monkeypatch.setattr(factory, "_factories", factories)
    yield


def _env(parallelism: int = 1) -> TableEnvironment:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", str(parallelism))
    t_env.execute_sql(
        "CREATE TABLE orders (id INT, currency STRING, amount INT, ts TIMESTAMP(3), pt AS PROCTIME()) WITH ("
        f"'connector' = 'filesystem', 'format' = 'csv', 'path' = '{ORDERS}')"
    )
    t_env.execute_sql(
        "CREATE TABLE rates (currency STRING, rate INT, name STRING, PRIMARY KEY (currency) NOT ENFORCED) WITH ("
        "'connector' = 'test-lookup', 'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.max-rows' = '2', "
        "'lookup.partial-cache.expire-after-write' = '1 min')"
    )
    return t_env


def _run(query: str, parallelism: int = 1) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in _env(parallelism).execute_sql(query).collect())


@pytest.mark.timeout(120)
def test_inner_lookup_join_joins_each_order_with_the_tables_current_row() -> None:
    query = (
        "SELECT o.id, r.rate, r.name FROM orders AS o JOIN rates FOR SYSTEM_TIME AS OF o.pt AS r "
        "ON o.currency = r.currency"
    )
    expected = [(1, 119, "euro"), (2, 102, "dollar"), (3, 119, "euro"), (5, 102, "dollar"), (6, 119, "euro")]
    expected += [(7, 119, "euro"), (8, 102, "dollar")]
    assert _run(query) == sorted(expected)
    assert _run(query, parallelism=2) == sorted(expected)


@pytest.mark.timeout(120)
def test_left_lookup_join_pads_misses_and_applies_the_residual_condition() -> None:
    query = (
        "SELECT o.id, o.amount * r.rate AS converted FROM orders AS o LEFT JOIN rates FOR SYSTEM_TIME AS OF o.pt "
        "AS r ON o.currency = r.currency AND r.rate > 110"
    )
    expected = [(1, 1190), (2, None), (3, 3570), (4, None), (5, None), (6, 7140), (7, 8330), (8, None)]
    assert _run(query) == expected


def test_a_table_that_cannot_look_up_is_refused_with_its_position() -> None:
    t_env = _env()
    t_env.execute_sql(
        f"CREATE TABLE plain (currency STRING, ts TIMESTAMP(3)) WITH ('connector' = 'filesystem', "
        f"'format' = 'csv', 'path' = '{ORDERS}')"
    )
    query = "SELECT o.id FROM orders AS o JOIN plain FOR SYSTEM_TIME AS OF o.pt AS p\nON o.currency = p.currency"
    with pytest.raises(TableException, match=r"line 1, column \d+: Processing-time temporal join is not supported"):
        t_env.execute_sql(query)


def test_partial_cache_evicts_the_least_recently_used_key_and_expires_after_write() -> None:
    now = [0.0]
    cache = LookupCache(LookupCacheOptions(max_rows=2, expire_after_write=1000), clock=lambda: now[0])
    cache.put(("EUR",), [("EUR", 1)])
    cache.put(("USD",), [("USD", 2)])
    assert cache.get(("EUR",)) == [("EUR", 1)]
    cache.put(("GBP",), [])  # a missing key is cached too (cache-missing-key defaults to true)
    assert cache.get(("USD",)) is None and cache.get(("GBP",)) == []
    now[0] = 1.0
    assert cache.get(("EUR",)) is None


def test_cache_options_parse_flinks_durations() -> None:
    options = LookupCacheOptions.from_options(
        {"lookup.cache": "PARTIAL", "lookup.partial-cache.expire-after-access": "10 s"}
    )
    assert options == LookupCacheOptions(expire_after_access=10_000)
    assert LookupCacheOptions.from_options({}) is None
    assert parse_duration_ms("5 min") == 300_000 and parse_duration_ms("100ms") == 100


@pytest.mark.timeout(120)
def test_the_lookup_table_scans_as_a_bounded_table_too() -> None:
    assert _run("SELECT currency, rate FROM rates") == sorted((c, r) for c, r, _ in RATES)
