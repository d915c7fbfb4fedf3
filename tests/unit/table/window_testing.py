"""What the window operator tests share: Flink's facts (``tests/data/flink_window``), the inputs they were computed
from as rows with rowtimes, small aggregate handles (count, sum, max) and an operator harness."""

from __future__ import annotations

import datetime
import decimal
import importlib.util
import json
from pathlib import Path
from typing import Any

from strom.api.row import Row, RowKind
from strom.table.runtime.window.time_window_util import datetime_to_millis

DATA = Path(__file__).resolve().parents[2] / "data" / "flink_window"

_spec = importlib.util.spec_from_file_location(
    "operator_harness", Path(__file__).parents[1] / "operators" / "operator_harness.py"
)
assert _spec is not None and _spec.loader is not None
harness_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(harness_module)
OperatorHarness = harness_module.OperatorHarness
TwoInputOperatorHarness = harness_module.TwoInputOperatorHarness
Record = harness_module.Record

DELAY = 5_000  # WATERMARK FOR ts AS ts - INTERVAL '5' SECOND


def table(name: str) -> list[tuple[Row, int]]:
    """The rows of ``<name>.csv`` (``user, second column, ts``) with their rowtimes in ms."""
    out = []
    for line in (DATA / f"{name}.csv").read_text().splitlines():
        user, second, ts = line.split(",")
        value: Any = int(second) if second.isdigit() else second
        when = datetime.datetime.fromisoformat(ts)
        out.append((Row(user, value, when), datetime_to_millis(when)))
    return out


def facts(name: str) -> list[tuple[str, list[Any]]]:
    """Flink's result rows of query ``name``: ``(kind, values)`` in Flink's order."""
    lines = (DATA / f"{name}.txt").read_text().splitlines()
    return [(d["kind"], d["values"]) for d in map(json.loads, lines[1:])]


def query(name: str) -> str:
    return (DATA / f"{name}.txt").read_text().splitlines()[0][3:]


def plain(value: Any) -> Any:
    if isinstance(value, datetime.datetime | datetime.date | datetime.time | decimal.Decimal):
        return str(value)
    return value


def normalized(rows: list[Row]) -> list[tuple[str, list[Any]]]:
    return [(str(r.get_row_kind()), [plain(v) for v in r]) for r in rows]


def unordered(rows: list[tuple[str, list[Any]]]) -> list[str]:
    return sorted(json.dumps(r) for r in rows)


def feed(harness: Any, rows: list[tuple[Row, int]], *, delay: int = DELAY, end: bool = True) -> None:
    """Each row, then the watermark ``max rowtime - delay`` (as Flink's bounded out-of-orderness), and at the end
    the final watermark."""
    high = -(1 << 63)
    for row, t in rows:
        harness.process_element(row, t)
        high = max(high, t)
        harness.process_watermark(high - delay)
    if end:
        harness.process_watermark((1 << 63) - 1)


class CountSumMax:
    """``COUNT(*), SUM(col), MAX(col)`` as an aggregate handle (accumulators ``[count, sum, max]``)."""

    def __init__(self, column: int) -> None:
        self.column = column

    def create_accumulators(self) -> list[Any]:
        return [0, None, None]

    def accumulate(self, accs: list[Any], row: Row) -> None:
        v = row[self.column]
        accs[0] += 1
        if v is not None:
            accs[1] = v if accs[1] is None else accs[1] + v
            accs[2] = v if accs[2] is None else max(accs[2], v)

    def retract(self, accs: list[Any], row: Row) -> None:
        v = row[self.column]
        accs[0] -= 1
        if v is not None:
            accs[1] -= v

    def merge(self, accs: list[Any], other: list[Any]) -> None:
        accs[0] += other[0]
        if other[1] is not None:
            accs[1] = other[1] if accs[1] is None else accs[1] + other[1]
            accs[2] = other[2] if accs[2] is None else max(accs[2], other[2])

    def get_value(self, accs: list[Any]) -> tuple[Any, ...]:
        return tuple(accs)

    def record_count_is_zero(self, accs: list[Any]) -> bool:
        return bool(accs[0] == 0)


class CountSum(CountSumMax):
    """``COUNT(*), SUM(col)``."""

    def get_value(self, accs: list[Any]) -> tuple[Any, ...]:
        return accs[0], accs[1]


__all__ = ["RowKind"]
