"""Flink's ChangelogNormalize over an upsert changelog (``upsert-kafka``): the first upsert of a key is ``+I``, a
changed one ``-U``/``+U``, an unchanged one nothing, a delete ``-D`` of the full previous row (a tombstone carries
only the key), a delete of an unknown key nothing — Flink's ``DeduplicateFunctionHelper.processLastRowOnChangelog``."""

from __future__ import annotations

from typing import Any

from strom.api.row import Row, RowKind, _create_row
from strom.table.runtime.changelog_normalize import ChangelogNormalizeFunction


class _State:
    def __init__(self, store: dict[Any, Any], key: list[Any]) -> None:
        self.store, self.key = store, key

    def value(self) -> Any:
        return self.store.get(self.key[0])

    def update(self, value: Any) -> None:
        self.store[self.key[0]] = value

    def clear(self) -> None:
        self.store.pop(self.key[0], None)


class _Context:
    def __init__(self, store: dict[Any, Any], key: list[Any]) -> None:
        self.state = _State(store, key)

    def get_state(self, descriptor: Any) -> _State:
        return self.state


def _run(rows: list[tuple[RowKind, list[Any]]]) -> list[str]:
    store: dict[Any, Any] = {}
    key: list[Any] = [None]
    function = ChangelogNormalizeFunction()
    function.open(_Context(store, key))  # type: ignore[arg-type]
    out: list[Row] = []
    for kind, values in rows:
        key[0] = values[0]
        out += function.process_element(_create_row(None, values, kind), None) or ()  # type: ignore[arg-type]
    return [f"{r.get_row_kind()}{list(r)}" for r in out]


def test_upserts_and_tombstones_become_a_full_changelog() -> None:
    rows = [
        (RowKind.INSERT, [1, "a", 1]),
        (RowKind.INSERT, [2, "b", 1]),
        (RowKind.UPDATE_AFTER, [1, "a", 2]),
        (RowKind.INSERT, [1, "a", 2]),  # unchanged: nothing
        (RowKind.DELETE, [2, None, None]),  # a tombstone: the key only
        (RowKind.DELETE, [3, None, None]),  # an unknown key: nothing
        (RowKind.INSERT, [2, "c", 5]),
    ]
    assert _run(rows) == [
        "+I[1, 'a', 1]",
        "+I[2, 'b', 1]",
        "-U[1, 'a', 1]",
        "+U[1, 'a', 2]",
        "-D[2, 'b', 1]",
        "+I[2, 'c', 5]",
    ]
