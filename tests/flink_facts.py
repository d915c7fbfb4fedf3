"""What the tests that compare strom's SQL with Flink's stored output share: the PyFlink programs' constants read
without importing pyflink, their csv inputs written locally, and a printed tableau read back into its final table."""

from __future__ import annotations

import ast
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from strom.api.row import Row, RowKind
from strom.table.table_result import materialize

DATA = Path(__file__).parent / "data" / "flink_sql"
_KINDS = {"+I": RowKind.INSERT, "-U": RowKind.UPDATE_BEFORE, "+U": RowKind.UPDATE_AFTER, "-D": RowKind.DELETE}


class FactProgram:
    """A fact program's ``QUERIES``, ``BATCH`` (the queries also run in BATCH mode; ``list(QUERIES)`` allowed) and
    ``SETUP`` statements, with the csv files it names (``files``: path constant → rows constant) written into a
    temporary directory and ``SETUP`` pointing at them."""

    def __init__(self, program: str, files: Mapping[str, str]) -> None:
        values: dict[str, Any] = {}
        for node in ast.parse((DATA / program).read_text()).body:
            if not (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)):
                continue
            name = node.targets[0].id
            if name in ("QUERIES", *files, *files.values()):
                values[name] = ast.literal_eval(node.value)
            elif name == "BATCH":
                text = ast.unparse(node.value)
                values[name] = list(values["QUERIES"]) if text == "list(QUERIES)" else ast.literal_eval(node.value)
            elif name == "SETUP":  # f-strings name the csv files: evaluate them with the program's own paths
                values[name] = eval(ast.unparse(node.value), {k: values[k] for k in files})  # our own test data
        self.values = values
        self.queries: dict[str, str] = values["QUERIES"]
        self.batch: list[str] = values.get("BATCH", [])
        directory = Path(tempfile.mkdtemp(prefix=f"strom-{Path(program).stem}-"))
        setup: list[str] = list(values["SETUP"])
        for path, rows in files.items():
            local = directory / f"{path.lower()}.csv"
            local.write_text("".join(",".join(str(v) for v in row) + "\n" for row in values[rows]))
            setup = [s.replace(values[path], str(local)) for s in setup]
        self.setup = setup


def final_rows(text: str) -> list[tuple[str, ...]]:
    """The final table (sorted cell texts) of one printed changelog, or of one printed BATCH result."""
    lines = [line for line in text.splitlines() if line.startswith("| ")][1:]  # without the header
    rows = []
    for line in lines:
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows.append(Row.of_kind(_KINDS[cells[0]], *cells[1:]) if cells[0] in _KINDS else Row(*cells))
    return sorted(tuple(r._values) for r in materialize(iter(rows)))
