"""Runs SQL expressions in PyFlink 2.3.0 and stores Flink's answers as test data (facts for strom's tests).

    /work/pyflink-venv/bin/python tests/data/flink_types/probe_flink.py tests/data/flink_types/cases_*.sql

Each ``cases_<family>.sql`` holds one SQL expression per line (``--`` starts a comment; a ``-- time-zone: Zone`` line
sets ``table.local-time-zone`` for the file, default UTC). For each expression the probe writes to
``results_<family>.json`` the result type (Flink's summary string) and the value ``collect()`` returns in Python,
tagged (``{"decimal": "1.50"}``, ``{"datetime": "2024-01-01T12:00:00"}``, …), or the error Flink raises (its class
and the first line of its message). Expressions are run in BATCH mode, many per ``SELECT``; a ``SELECT`` that fails
at run time is halved until the failing expressions run alone. strom's tests read the JSON; they never import pyflink.
"""

from __future__ import annotations

import datetime
import decimal
import json
import sys
from pathlib import Path
from typing import Any

from pyflink.common import Row
from pyflink.table import EnvironmentSettings, TableEnvironment

CHUNK = 40


def encode(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": value}
    if isinstance(value, float):
        return {"float": repr(value)}
    if isinstance(value, decimal.Decimal):
        return {"decimal": str(value)}
    if isinstance(value, str):
        return {"str": value}
    if isinstance(value, bytes | bytearray):
        return {"bytes": bytes(value).hex()}
    if isinstance(value, datetime.datetime):
        return {"datetime": value.isoformat()}
    if isinstance(value, datetime.date):
        return {"date": value.isoformat()}
    if isinstance(value, datetime.time):
        return {"time": value.isoformat()}
    if isinstance(value, datetime.timedelta):
        return {"timedelta_us": value // datetime.timedelta(microseconds=1)}
    if isinstance(value, Row):
        names = value._fields if hasattr(value, "_fields") else None
        return {"row": [encode(v) for v in value], "names": list(names) if names else None}
    if isinstance(value, list | tuple):
        return {"list": [encode(v) for v in value]}
    if isinstance(value, dict):
        return {"map": [[encode(k), encode(v)] for k, v in value.items()]}
    return {"other": type(value).__name__, "repr": repr(value)}


def error_of(exc: BaseException) -> dict[str, str]:
    text = str(exc)
    java = getattr(exc, "java_exception", None)
    if java is not None:
        text = java.toString()
        cause = java
        while cause.getCause() is not None:
            cause = cause.getCause()
        root = cause.toString()
    else:
        root = text
    return {"error": text.splitlines()[0][:400], "root": root.splitlines()[0][:400] if root else ""}


def read_cases(path: Path) -> tuple[str, list[str]]:
    zone = "UTC"
    exprs: list[str] = []
    for line in path.read_text().splitlines():
        stripped = line.strip()
        if stripped.startswith("-- time-zone:"):
            zone = stripped.split(":", 1)[1].strip()
        elif stripped and not stripped.startswith("--"):
            exprs.append(stripped)
    return zone, exprs


def run_values(t_env: TableEnvironment, exprs: list[str]) -> list[Any]:
    select = ", ".join(f"{e} AS c{i}" for i, e in enumerate(exprs))
    with t_env.sql_query(f"SELECT {select}").execute().collect() as results:
        rows = list(results)
    return list(rows[0])


def run_bisecting(t_env: TableEnvironment, out: list[dict[str, Any]], chunk: list[int]) -> None:
    """Run the expressions at *chunk* in one SELECT; if it fails, halve it until the failing ones stand alone."""
    try:
        values = run_values(t_env, [out[i]["expr"] for i in chunk])
    except Exception as exc:
        if len(chunk) == 1:
            out[chunk[0]].update(error_of(exc))
            return
        half = len(chunk) // 2
        run_bisecting(t_env, out, chunk[:half])
        run_bisecting(t_env, out, chunk[half:])
        return
    for i, value in zip(chunk, values, strict=True):
        out[i]["value"] = encode(value)
        out[i]["pytype"] = type(value).__name__


def probe_file(t_env: TableEnvironment, path: Path) -> list[dict[str, Any]]:
    zone, exprs = read_cases(path)
    t_env.get_config().set("table.local-time-zone", zone)
    out: list[dict[str, Any]] = []
    valid: list[int] = []
    for expr in exprs:
        entry: dict[str, Any] = {"expr": expr}
        try:
            table = t_env.sql_query(f"SELECT {expr}")
            logical = table._j_table.getResolvedSchema().getColumnDataTypes().get(0).getLogicalType()
            entry["type"] = logical.asSummaryString()
            valid.append(len(out))
        except Exception as exc:
            entry.update(error_of(exc))
        out.append(entry)
    for start in range(0, len(valid), CHUNK):
        run_bisecting(t_env, out, valid[start : start + CHUNK])
    return out


def main(paths: list[str]) -> None:
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.get_config().set("parallelism.default", "1")
    for name in paths:
        path = Path(name)
        results = probe_file(t_env, path)
        target = path.with_name(path.stem.replace("cases_", "results_") + ".json")
        target.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
        print(f"{target}: {len(results)} expressions, {sum('error' in r for r in results)} errors", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
