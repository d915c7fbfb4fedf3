"""Flink's regular-expression functions: REGEXP, REGEXP_REPLACE, REGEXP_EXTRACT (Java regex semantics).

Patterns are Java's ``java.util.regex`` syntax, which Python's ``re`` reads the same for the common constructs;
REGEXP_REPLACE takes its replacement literally and REGEXP_EXTRACT's index defaults to 0 (the whole match), as
Flink's. A pattern that does not compile gives NULL. Compiled patterns are cached.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

from strom.table.functions.bound_function import (
    BoundFunction,
    FunctionContext,
    Resolver,
    arity,
    nullable_if_any,
    strict,
    validation_error,
)
from strom.table.functions.type_inference import is_string
from strom.table.logical_types import MAX_LENGTH, BooleanType, DataType, LogicalTypeFamily, NullType, VarCharType

__all__ = ["FUNCTIONS", "compile_java_regex"]

STRING = VarCharType(MAX_LENGTH)


@functools.lru_cache(maxsize=256)
def compile_java_regex(pattern: str) -> re.Pattern[str] | None:
    """The compiled pattern, or ``None`` if it is not a valid regex."""
    try:
        return re.compile(pattern)
    except re.error:
        return None


def _regexp(s: str, pattern: str) -> bool | None:
    compiled = compile_java_regex(pattern)
    return None if compiled is None else compiled.search(s) is not None


def _regexp_replace(s: str, pattern: str, replacement: str) -> str | None:
    """Every match replaced by *replacement* taken literally (Flink's: ``$1`` is not a group reference)."""
    compiled = compile_java_regex(pattern)
    if compiled is None:
        return None
    return compiled.sub(lambda _m: replacement, s)


def _regexp_extract(s: str, pattern: str, index: int = 0) -> str | None:
    compiled = compile_java_regex(pattern)
    if compiled is None or index < 0 or index > compiled.groups:
        return None
    m = compiled.search(s)
    return None if m is None else m.group(index)


def _check(name: str, types: Sequence[DataType], kinds: str) -> None:
    for t, k in zip(types, kinds, strict=True):
        if isinstance(t, NullType):
            continue
        if (k == "s" and not is_string(t)) or (k == "i" and not t.has_family(LogicalTypeFamily.INTEGER_NUMERIC)):
            raise validation_error(name, f"{name}({', '.join('STRING' if c == 's' else 'INT' for c in kinds)})", types)


def _resolver(kinds: Sequence[str], result: DataType, fn: Any) -> Resolver:
    def resolve(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
        arity(name, types, min(len(k) for k in kinds), max(len(k) for k in kinds))
        _check(name, types, next(k for k in kinds if len(k) == len(types)))
        rtype = result.nullable() if name == "REGEXP_EXTRACT" else nullable_if_any(result, types)
        return BoundFunction(name, rtype, strict(fn, len(types)))

    return resolve


FUNCTIONS: dict[str, Resolver] = {
    "REGEXP": _resolver(["ss"], BooleanType(), _regexp),
    "REGEXP_REPLACE": _resolver(["sss"], STRING, _regexp_replace),
    "REGEXP_EXTRACT": _resolver(["ss", "ssi"], STRING, _regexp_extract),
}
