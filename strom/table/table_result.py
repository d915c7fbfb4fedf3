"""PyFlink's ``TableResult``: the outcome of ``execute_sql`` / ``Table.execute()`` / ``execute_insert``.

``print()`` writes Flink's tableau form: in STREAMING mode each change as it arrives with its ``op`` column
(``+I``, ``-U``, ``+U``, ``-D``), in BATCH mode the final rows; column widths follow the types as Flink's
``PrintStyle.tableauWithTypeInferredColumnWidths`` (INT 11, BIGINT 20, strings and others 30, …), longer values
cut with ``...``. ``collect()`` iterates the rows (with their ``RowKind``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from strom.api.row import Row, RowKind
from strom.table.runtime.row_format import value_to_string

if TYPE_CHECKING:
    from strom.client.job_client import JobClient
    from strom.table.planner.logical import RowType

__all__ = ["ResultKind", "TableResult", "materialize"]

_MAX_WIDTH = 30
_NULL = "<NULL>"


class ResultKind:
    SUCCESS = "SUCCESS"
    SUCCESS_WITH_CONTENT = "SUCCESS_WITH_CONTENT"


def _type_width(data_type: Any) -> int:
    root = data_type.type_root.name
    fixed = {"TINYINT": 4, "SMALLINT": 6, "INTEGER": 11, "BIGINT": 20, "BOOLEAN": 5, "DATE": 10}
    if root in fixed:
        return fixed[root]
    if root == "DECIMAL":
        return int(data_type.precision) + 2
    if root == "TIME_WITHOUT_TIME_ZONE":
        precision = int(data_type.precision)
        return 8 if precision == 0 else precision + 9
    if root in ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
        precision = int(data_type.precision)
        return 19 if precision == 0 else 20 + precision
    return _MAX_WIDTH


def column_widths(row_type: RowType) -> list[int]:
    return [max(len(n), _type_width(t), len(_NULL)) for n, t in zip(row_type.names, row_type.types, strict=True)]


def _cell(text: str, width: int) -> str:
    if len(text) > width:
        text = text[: width - 3] + "..."
    return text.rjust(width)


def materialize(rows: Iterator[Row]) -> list[Row]:
    """Apply a changelog: the final rows (an update replaces its row in place, as a batch result keeps order)."""
    table: list[Row | None] = []
    pending: int | None = None
    for row in rows:
        kind = row.get_row_kind()
        if kind in (RowKind.UPDATE_BEFORE, RowKind.DELETE):
            target = row._values
            for i, existing in enumerate(table):
                if existing is not None and existing._values == target:
                    table[i] = None
                    pending = i if kind is RowKind.UPDATE_BEFORE else None
                    break
            continue
        insert = Row(*row._values)
        if kind is RowKind.UPDATE_AFTER and pending is not None:
            table[pending] = insert
        else:
            table.append(insert)
        pending = None
    return [r for r in table if r is not None]


class TableResult:
    """A statement's result: a job (``get_job_client()``), rows, or ``OK``."""

    def __init__(
        self,
        row_type: RowType | None,
        *,
        rows: Callable[[], Iterator[Row]] | None = None,
        job_client: JobClient | None = None,
        streaming: bool = True,
        static_rows: Sequence[Row] | None = None,
        raw: bool = False,
    ) -> None:
        self._row_type = row_type
        self._raw = raw  # Flink's TABLE_RESULT_OK: printed as its content ("OK"), result kind SUCCESS
        self._rows = rows
        self._job_client = job_client
        self._streaming = streaming
        self._static = list(static_rows) if static_rows is not None else None
        self._iterator: Iterator[Row] | None = None

    # -- PyFlink's API -------------------------------------------------------------------------------
    def get_job_client(self) -> JobClient | None:
        return self._job_client

    def get_result_kind(self) -> str:
        empty = self._raw or (self._rows is None and self._static is None)
        return ResultKind.SUCCESS if empty else ResultKind.SUCCESS_WITH_CONTENT

    def get_table_schema(self) -> Any:
        return self._row_type

    def get_resolved_schema(self) -> Any:
        return self._row_type

    def wait(self, timeout_ms: int | None = None) -> None:
        if self._job_client is not None:
            self._job_client.get_job_execution_result()

    def collect(self) -> Iterator[Row]:
        if self._static is not None:
            return iter(self._static)
        if self._rows is None:
            return iter(())
        source = self._rows()
        return source if self._streaming else iter(materialize(source))

    def _inferred_widths(self) -> list[int]:
        """Flink's ``tableauWithDataInferredColumnWidths`` for a statement's rows (SHOW, DESCRIBE, …)."""
        assert self._row_type is not None and self._static is not None
        widths = [len(n) for n in self._row_type.names]
        for row in self._static:
            for i, (v, t) in enumerate(zip(row._values, self._row_type.types, strict=False)):
                widths[i] = max(widths[i], len(_NULL if v is None else value_to_string(v, t)))
        return widths

    def print(self) -> None:
        if self._row_type is None:
            return
        out = sys.stdout
        if self._raw:
            out.write("".join(f"{row._values[0]}\n" for row in self.collect()))
            return
        names = list(self._row_type.names)
        widths = column_widths(self._row_type) if self._static is None else self._inferred_widths()
        with_kind = self._streaming and self._static is None
        if with_kind:
            names, widths = ["op", *names], [2, *widths]
        border = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
        rows = self.collect()
        count = 0
        for row in rows:
            if count == 0:
                out.write(
                    f"{border}\n| {' | '.join(_cell(n, w) for n, w in zip(names, widths, strict=True))} |\n{border}\n"
                )
            cells = [
                _NULL if v is None else value_to_string(v, t)
                for v, t in zip(row._values, self._row_type.types, strict=False)
            ]
            if with_kind:
                cells = [str(row.get_row_kind()), *cells]
            out.write(f"| {' | '.join(_cell(c, w) for c, w in zip(cells, widths, strict=True))} |\n")
            out.flush()
            count += 1
        if count == 0:
            out.write("Empty set\n")
        else:
            out.write(f"{border}\n{count} row{'s' if count != 1 else ''} in set\n")
        out.flush()
