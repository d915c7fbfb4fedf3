"""Reading what ``TableResult.print()`` (Flink's tableau) printed back into rows, for the tests that compare strom's
output with Flink's stored output."""

from __future__ import annotations

from strom.api.row import Row, RowKind
from strom.table.table_result import materialize

_KINDS = {"+I": RowKind.INSERT, "-U": RowKind.UPDATE_BEFORE, "+U": RowKind.UPDATE_AFTER, "-D": RowKind.DELETE}


def final_rows(text: str) -> list[tuple[str, ...]]:
    """The final table (sorted cell texts) of one printed changelog, or of one printed BATCH result."""
    lines = [line for line in text.splitlines() if line.startswith("| ")][1:]  # without the header
    rows = []
    for line in lines:
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows.append(Row.of_kind(_KINDS[cells[0]], *cells[1:]) if cells[0] in _KINDS else Row(*cells))
    return sorted(tuple(r._values) for r in materialize(iter(rows)))
