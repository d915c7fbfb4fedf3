"""``AggsHandleFunction``: the accumulators of one aggregation's calls, as Flink's generated ``AggsHandleFunction``.

The planner builds one :class:`AggsHandle` per aggregation (group aggregation, window aggregation, OVER) from its
aggregate calls; the operators drive it through the :class:`AggsHandle` protocol. Accumulators are a list of plain,
picklable values (ints, Decimals, lists, dicts) so they live in keyed state on the heap or RocksDB backend.

``accs`` holds, in order: one accumulator per aggregate call, one ``{value: count}`` dict per distinct argument
list (Flink's distinct ``MapView``), and last the record count (Flink's ``count1``) that tells an empty group.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from strom.api.row import Row
from strom.table.functions.aggfunctions import AggregateFunctionImpl
from strom.table.runtime.agg_handler_code_generator import generate_accumulate, generate_get_value

__all__ = ["AggCall", "AggsHandle", "GeneratedAggsHandle"]


class AggsHandle(Protocol):
    """The contract between the planner and the aggregating operators (see ``docs/sql.md``)."""

    def create_accumulators(self) -> list[Any]: ...

    def accumulate(self, accs: list[Any], row: Row) -> None: ...

    def retract(self, accs: list[Any], row: Row) -> None: ...

    def merge(self, accs: list[Any], other: list[Any]) -> None: ...

    def get_value(self, accs: list[Any]) -> tuple[Any, ...]: ...

    def record_count_is_zero(self, accs: list[Any]) -> bool: ...


@dataclass(frozen=True, slots=True)
class AggCall:
    """One aggregate call: its function, the input columns of its arguments, DISTINCT, and a FILTER column."""

    function: AggregateFunctionImpl
    args: tuple[int, ...]
    distinct: bool = False
    filter_arg: int | None = None


class GeneratedAggsHandle:
    """An :class:`AggsHandle` over a list of :class:`AggCall` (Flink generates this class per query)."""

    def __init__(self, calls: Sequence[AggCall]) -> None:
        self._calls = tuple(calls)
        distinct_keys: list[tuple[int, ...]] = []
        slots: list[int | None] = []
        for call in self._calls:
            if call.distinct:
                if call.args not in distinct_keys:
                    distinct_keys.append(call.args)
                slots.append(len(self._calls) + distinct_keys.index(call.args))
            else:
                slots.append(None)
        self._distinct_slots = tuple(slots)
        self._n_distinct = len(distinct_keys)
        self._count_slot = len(self._calls) + self._n_distinct
        # (index, function, argument getter, distinct slot, filter column) per call, resolved once
        self._plan = tuple(
            (i, c.function, c.args, self._distinct_slots[i], c.filter_arg) for i, c in enumerate(self._calls)
        )
        self._getters = tuple((i, c.function.get_value) for i, c in enumerate(self._calls))
        # per row: generated straight-line code where no call has DISTINCT or FILTER (Flink generates it always)
        generated = generate_accumulate(self._calls, self._count_slot, "+")
        self.accumulate: Callable[[list[Any], Row], None] = generated or self._accumulate
        self.retract: Callable[[list[Any], Row], None] = (
            generate_accumulate(self._calls, self._count_slot, "-") or self._retract
        )
        self.get_value: Callable[[list[Any]], tuple[Any, ...]] = generate_get_value(self._calls)

    def create_accumulators(self) -> list[Any]:
        accs: list[Any] = [c.function.create_accumulator() for c in self._calls]
        accs.extend({} for _ in range(self._n_distinct))
        accs.append(0)
        return accs

    def _accumulate(self, accs: list[Any], row: Row) -> None:
        values = row._values
        seen: set[int] = set()
        for i, function, args, slot, filter_arg in self._plan:
            if filter_arg is not None and values[filter_arg] is not True:
                continue
            arg = _argument(values, args)
            if slot is not None:
                key = arg
                counts = accs[slot]
                if slot not in seen:
                    seen.add(slot)
                    counts[key] = counts.get(key, 0) + 1
                if counts[key] != 1:
                    continue
            accs[i] = function.accumulate(accs[i], arg)
        accs[self._count_slot] += 1

    def _retract(self, accs: list[Any], row: Row) -> None:
        values = row._values
        seen: set[int] = set()
        for i, function, args, slot, filter_arg in self._plan:
            if filter_arg is not None and values[filter_arg] is not True:
                continue
            arg = _argument(values, args)
            if slot is not None:
                counts = accs[slot]
                if slot not in seen:
                    seen.add(slot)
                    left = counts.get(arg, 0) - 1
                    if left > 0:
                        counts[arg] = left
                    else:
                        counts.pop(arg, None)
                if arg in counts:
                    continue
            accs[i] = function.retract(accs[i], arg)
        accs[self._count_slot] -= 1

    def merge(self, accs: list[Any], other: list[Any]) -> None:
        for i, function, _args, slot, _filter in self._plan:
            if slot is None:
                accs[i] = function.merge(accs[i], other[i])
        for offset in range(self._n_distinct):
            slot = len(self._calls) + offset
            mine, theirs = accs[slot], other[slot]
            for key, n in theirs.items():
                if key not in mine:
                    for i, function, _args, call_slot, _f in self._plan:
                        if call_slot == slot:
                            accs[i] = function.accumulate(accs[i], key)
                mine[key] = mine.get(key, 0) + n
        accs[self._count_slot] += other[self._count_slot]

    def _get_value(self, accs: list[Any]) -> tuple[Any, ...]:
        return tuple([get(accs[i]) for i, get in self._getters])

    def record_count_is_zero(self, accs: list[Any]) -> bool:
        return bool(accs[self._count_slot] <= 0)


def _argument(values: list[Any], args: tuple[int, ...]) -> Any:
    if not args:
        return None
    if len(args) == 1:
        return values[args[0]]
    return tuple(values[a] for a in args)
