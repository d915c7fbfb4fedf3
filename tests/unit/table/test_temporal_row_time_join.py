"""Flink's ``TemporalRowTimeJoinOperator`` semantics on the operator alone: versions by rowtime, emission on the
watermark in arrival order, retractions as versions, LEFT padding, the cleanup of expired versions, and a snapshot
restored into a fresh operator on the heap and the RocksDB backend."""

from __future__ import annotations

import datetime
import importlib.util
from pathlib import Path
from typing import Any

import pytest

from strom.api.row import Row, RowKind, _create_row
from strom.table.runtime.group_agg import KeyByIndices
from strom.table.runtime.rowtime_timers import RowtimeKeyedCoProcessOperator
from strom.table.runtime.temporal_row_time_join import TemporalRowTimeJoinFunction

_spec = importlib.util.spec_from_file_location(
    "operator_harness", Path(__file__).parents[1] / "operators" / "operator_harness.py"
)
assert _spec is not None and _spec.loader is not None
_harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_harness)

T0 = datetime.datetime(2024, 1, 1)


def _t(seconds: float) -> datetime.datetime:
    return T0 + datetime.timedelta(seconds=seconds)


def _ms(seconds: float) -> int:
    return int((_t(seconds) - datetime.datetime(1970, 1, 1)).total_seconds() * 1000)


def _order(i: int, cur: str, seconds: float) -> Row:
    return _create_row(None, [i, cur, _t(seconds)])


def _rate(cur: str, rate: int, seconds: float, kind: RowKind = RowKind.INSERT) -> Row:
    return _create_row(None, [cur, rate, _t(seconds)], kind)


def _harness_for(left_outer: bool = False, backend: str = "hashmap") -> Any:
    function = TemporalRowTimeJoinFunction(2, 2, 3, left_outer, None)
    operator = RowtimeKeyedCoProcessOperator(function, KeyByIndices((1,)), KeyByIndices((0,)))
    return _harness.TwoInputOperatorHarness(operator, state_backend=backend)


def _values(h: Any) -> list[tuple[str, int, Any]]:
    return [(str(r.get_row_kind()), r[0], r[4]) for r in h.records()]


def test_left_rows_wait_for_the_watermark_and_join_the_version_valid_at_their_time() -> None:
    h = _harness_for().open()
    h.process_element2(_rate("EUR", 114, 0), _ms(0))
    h.process_element1(_order(1, "EUR", 1), _ms(1))
    h.process_element2(_rate("EUR", 116, 4), _ms(4))
    h.process_element1(_order(2, "EUR", 5), _ms(5))
    h.process_element1(_order(3, "EUR", 3), _ms(3))
    assert h.records() == []
    h.process_watermark(_ms(3))
    out = [o for o in h.extract_output() if isinstance(o, _harness.Record)]
    assert [(r.value[0], r.value[4], r.timestamp) for r in out] == [(1, 114, _ms(1)), (3, 114, _ms(3))]  # arrival
    # order, each joined with the version at its own rowtime and stamped with it
    h.process_watermark(_ms(10))
    assert _values(h) == [("+I", 2, 116)]


def test_a_retracted_version_joins_nothing_and_left_pads_with_nulls() -> None:
    h = _harness_for(left_outer=True).open()
    h.process_element2(_rate("EUR", 114, 0), _ms(0))
    h.process_element2(_rate("EUR", 114, 2, RowKind.DELETE), _ms(2))
    h.process_element1(_order(1, "EUR", 1), _ms(1))
    h.process_element1(_order(2, "EUR", 3), _ms(3))
    h.process_element1(_order(3, "JPY", 3), _ms(3))
    h.process_watermark(_ms(5))
    assert sorted(_values(h)) == [("+I", 1, 114), ("+I", 2, None), ("+I", 3, None)]


def test_versions_older_than_the_newest_before_the_watermark_are_cleaned_up() -> None:
    h = _harness_for().open()
    for rate, seconds in ((114, 0), (116, 4), (119, 10)):
        h.process_element2(_rate("EUR", rate, seconds), _ms(seconds))
    h.process_element1(_order(1, "EUR", 5), _ms(5))
    h.process_watermark(_ms(6))
    assert _values(h) == [("+I", 1, 116)]
    h.process_element1(_order(2, "EUR", 1), _ms(1))  # late: its version is gone, as in Flink
    h.process_watermark(_ms(7))
    assert _values(h) == []


@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_snapshot_restored_into_a_fresh_operator_goes_on(backend: str) -> None:
    h = _harness_for(backend=backend).open()
    h.process_element2(_rate("EUR", 114, 0), _ms(0))
    h.process_element1(_order(1, "EUR", 1), _ms(1))
    h.process_element2(_rate("USD", 100, 1), _ms(1))
    h.process_element1(_order(2, "USD", 2), _ms(2))
    snap = h.snapshot()
    restored = _harness_for(backend=backend).open(snap)
    restored.process_element2(_rate("EUR", 116, 4), _ms(4))
    restored.process_element1(_order(3, "EUR", 5), _ms(5))
    restored.process_watermark(_ms(10))
    assert sorted(_values(restored)) == [("+I", 1, 114), ("+I", 2, 100), ("+I", 3, 116)]
