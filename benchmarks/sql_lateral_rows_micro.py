"""CPU time of ``LateralRows`` per row (``join_lateral`` / ``left_outer_join_lateral``) against the form before the
outer padding (stop 40, sqlfeat): paired rounds, alternating order, median of ratios.

    PYTHONPATH=$PWD python benchmarks/sql_lateral_rows_micro.py
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Iterator
from typing import Any

from strom.api.row import Row
from strom.table.udf import LateralRows, _row_values


class _Before:
    """``LateralRows.__call__`` as it was before ``outer_width``."""

    def __init__(self, function: Any, columns: tuple[int, ...]) -> None:
        self.function = function
        self.columns = columns

    def __call__(self, row: Any) -> list[tuple[Any, ...]]:
        from strom.api.row import Row  # noqa: F401  (as the original, per call)

        values = row._values
        results = self.function(*[values[c] for c in self.columns])
        own = tuple(values)
        return [] if results is None else [own + _row_values(r) for r in results]


def _words(s: str) -> Iterator[tuple[str, int]]:
    for w in s.split(" "):
        yield w, len(w)


def main() -> None:
    rows = [Row(i, "a bb ccc") for i in range(20_000)]
    before, after = _Before(_words, (1,)), LateralRows(_words, ("id", "s"), (1,))
    ratios = []
    gc.disable()
    for i in range(8):
        times = {}
        for fn in (before, after) if i % 2 else (after, before):
            start = time.thread_time()
            for row in rows:
                fn(row)
            times[id(fn)] = time.thread_time() - start
        ratios.append(times[id(after)] / times[id(before)])
    print(f"LateralRows after/before CPU ratio: median {statistics.median(ratios):.3f}, rounds {ratios}")


if __name__ == "__main__":
    main()
