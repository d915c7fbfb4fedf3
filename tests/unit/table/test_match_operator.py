"""The MATCH_RECOGNIZE operator (Flink's ``CepOperator``) on its own: rows wait for the watermark and enter the NFA
in rowtime order whatever their arrival order, late rows are dropped, each partition matches alone, the shared
buffer keeps only rows a match may still need, and a snapshot restored into a fresh operator (heap and RocksDB)
finishes the matches begun before it."""

from __future__ import annotations

import datetime
import importlib.util
from pathlib import Path
from typing import Any

import pytest

from strom.api.row import Row, _create_row
from strom.table.runtime.group_agg import KeyByIndices
from strom.table.runtime.match.match_expression import MatchExpression, Slot
from strom.table.runtime.match.match_operator import MatchFunction, MatchSpec
from strom.table.runtime.match.nfa import AfterMatchSkip, ComputationState, NFAState
from strom.table.runtime.match.pattern import parse_pattern
from strom.table.runtime.rowtime_timers import RowtimeKeyedProcessOperator

_spec = importlib.util.spec_from_file_location(
    "operator_harness", Path(__file__).parents[1] / "operators" / "operator_harness.py"
)
assert _spec is not None and _spec.loader is not None
_harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_harness)

T0 = datetime.datetime(2024, 1, 1)
EPOCH = datetime.datetime(1970, 1, 1)


class _Price:
    """``price < n`` (or ``>``) of the row being tested: a compiled slot expression of one NAV slot."""

    def __init__(self, op: str, n: int) -> None:
        self.op, self.n = op, n

    def __call__(self, row: Row) -> list[Any]:
        value = row._values[0]
        return [value < self.n if self.op == "<" else value > self.n]


class _First:
    def __call__(self, row: Row) -> list[Any]:
        return [row._values[0]]


def _spec_for() -> MatchSpec:
    """``PATTERN (A B+? C) DEFINE A AS price < 20, B AS price > 10, C AS price > 20``, MEASURES FIRST(B.price),
    LAST(B.price), C.price, SUM(B.price)."""
    price = 1

    def condition(op: str, n: int, variable: int) -> MatchExpression:
        return MatchExpression([Slot("NAV", variable, price)], _Price(op, n), condition=True)

    def measure(slot: Slot) -> MatchExpression:
        return MatchExpression([slot], _First())

    measures = (
        measure(Slot("NAV", 1, price, first=True)),
        measure(Slot("NAV", 1, price)),
        measure(Slot("NAV", 2, price)),
        measure(Slot("AGG", 1, price, name="SUM", arg_type=_int_type())),
    )
    conditions = (condition("<", 20, 0), condition(">", 10, 1), condition(">", 20, 2))
    return MatchSpec(parse_pattern("A B+? C"), conditions, measures, AfterMatchSkip(), None, (0,), 2)


def _int_type() -> Any:
    from strom.table.types import DataTypes

    return DataTypes.INT()


def _harness_for(backend: str = "hashmap") -> Any:
    operator = RowtimeKeyedProcessOperator(MatchFunction(_spec_for()), KeyByIndices((0,)))
    return _harness.OperatorHarness(operator, state_backend=backend)


def _tick(sym: str, price: int, seconds: int) -> tuple[Row, int]:
    ts = T0 + datetime.timedelta(seconds=seconds)
    return _create_row(None, [sym, price, ts]), int((ts - EPOCH).total_seconds() * 1000)


def _ms(seconds: int) -> int:
    return int((T0 + datetime.timedelta(seconds=seconds) - EPOCH).total_seconds() * 1000)


def _feed(h: Any, ticks: list[tuple[str, int, int]]) -> None:
    for sym, price, seconds in ticks:
        h.process_element(*_tick(sym, price, seconds))


def test_rows_are_matched_in_rowtime_order_per_partition_once_the_watermark_passes() -> None:
    h = _harness_for().open()
    _feed(h, [("ACME", 17, 2), ("ACME", 12, 1), ("BETA", 5, 1), ("ACME", 21, 4), ("ACME", 19, 3), ("BETA", 30, 2)])
    assert h.records() == []
    h.process_watermark(_ms(3))
    _feed(h, [("ACME", 1, 3)])  # at the watermark: late, dropped
    h.process_watermark(_ms(10))
    out = [o for o in h.extract_output() if isinstance(o, _harness.Record)]
    assert [(tuple(r.value), r.timestamp) for r in out] == [(("ACME", 17, 19, 21, 36), _ms(4))]  # stamped with
    # the match's last rowtime; BETA: A5, then 30 is C, but B+? needs a B first


def test_the_shared_buffer_releases_rows_no_match_needs() -> None:
    class Buffer(dict[Any, Any]):
        def remove(self, key: Any) -> None:
            del self[key]

    function = MatchFunction(_spec_for())
    function.buffer = Buffer({(1, 0): "a", (2, 1): "b", (3, 2): "c"})
    state = NFAState([ComputationState(0, 0), ComputationState(1, 1, ((0, (2, 1)),))], [])
    function._release_unreferenced(state)
    assert dict(function.buffer) == {(2, 1): "b"}


@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_a_match_begun_before_a_snapshot_ends_after_the_restore(backend: str) -> None:
    h = _harness_for(backend).open()
    _feed(h, [("ACME", 12, 1), ("ACME", 17, 2), ("BETA", 9, 2)])
    h.process_watermark(_ms(2))
    snapshot = h.snapshot()
    restored = _harness_for(backend).open(snapshot)
    _feed(restored, [("ACME", 19, 3), ("ACME", 21, 4), ("BETA", 11, 3), ("BETA", 40, 4)])
    restored.process_watermark(_ms(10))
    got = sorted(tuple(r) for r in restored.records())
    assert got == [("ACME", 17, 19, 21, 36), ("BETA", 11, 11, 40, 11)]
