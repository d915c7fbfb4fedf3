"""A Calc over a batch of rows: the generated closure (one call per row) vs pyarrow compute on the batch's columns
(issue 34's design: "expressions evaluate column-wise where records are columnar … measure both").

    python benchmarks/sql_calc_columnar.py [--batch 1024] [--rounds 7]

The Calc is ``sql_jobs``' ``SELECT user_id, i * 3 + 1 WHERE MOD(i, 3) <> 0 AND user_id < 900``, its closure taken
from the plan strom's planner builds. pyarrow's form: the rows' columns into arrays, ``MOD`` as ``i - 3 * (i / 3)``
(pyarrow has no integer remainder kernel; its integer ``divide`` truncates, as Java's), filter, project, and the
result back into rows — and, apart, the compute alone (what a columnar source would pay). Process CPU time per row,
the median of the rounds, all in one process; both outputs are checked equal.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from sql_jobs import USERS, sql_job

from strom import StreamExecutionEnvironment
from strom.api.row import Row, _create_row


def planned_calc() -> Any:
    """The compiled closure of the query's filtering Calc (``flat_map``: ``()`` or ``(row,)``)."""
    env = StreamExecutionEnvironment.get_execution_environment()
    sql_job(env, "calc", 1000, "/tmp")
    todo, seen = list(env._transformations), set()
    while todo:
        t = todo.pop()
        if t.id in seen:
            continue
        seen.add(t.id)
        todo.extend(t.inputs)
        if t.name.startswith("Calc(select=[user_id, v])"):
            return t.operator._fn  # type: ignore[attr-defined]
    raise RuntimeError("expected the query's Calc in the plan; got none")


def closure_form(calc: Any, batch: list[Row]) -> list[Row]:
    return [out for row in batch for out in calc(row)]


def to_columns(batch: list[Row]) -> tuple[pa.Array, pa.Array]:
    return pa.array([r._values[0] for r in batch], pa.int64()), pa.array([r._values[1] for r in batch], pa.int32())


def compute(i: pa.Array, user: pa.Array) -> tuple[pa.Array, pa.Array]:
    mod = pc.subtract(i, pc.multiply(pc.divide(i, 3), 3))
    keep = pc.and_kleene(pc.not_equal(mod, 0), pc.less(user, 900))
    kept_i, kept_user = pc.filter(i, keep), pc.filter(user, keep)
    return kept_user, pc.add(pc.multiply(kept_i, 3), 1)


def arrow_form(batch: list[Row]) -> list[Row]:
    user, value = compute(*to_columns(batch))
    return [_create_row(None, [u, v]) for u, v in zip(user.to_pylist(), value.to_pylist(), strict=True)]


def per_row_cpu(fn: Any, rounds: int, n: int) -> float:
    times = []
    for _ in range(rounds):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return statistics.median(times) / n * 1e6


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--batches", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    calc = planned_calc()
    batches = [
        [_create_row(None, [i, (i * 7919) % USERS]) for i in range(b * args.batch, (b + 1) * args.batch)]
        for b in range(args.batches)
    ]
    n = args.batch * args.batches
    assert [closure_form(calc, b)[0]._values for b in batches[:3]] == [arrow_form(b)[0]._values for b in batches[:3]]
    columns = [to_columns(b) for b in batches]
    results = {
        "generated closure, per row": per_row_cpu(lambda: [closure_form(calc, b) for b in batches], args.rounds, n),
        "pyarrow compute, rows → columns → rows": per_row_cpu(lambda: [arrow_form(b) for b in batches], args.rounds, n),
        "pyarrow compute alone (columnar in and out)": per_row_cpu(
            lambda: [compute(*c) for c in columns], args.rounds, n
        ),
    }
    print(f"batch {args.batch} rows, {n:,} rows, CPU µs per input row (median of {args.rounds}):")
    for name, us in results.items():
        print(f"  {name}: {us:.3f}")


if __name__ == "__main__":
    main()
