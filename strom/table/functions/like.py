"""``LIKE`` (with ``ESCAPE``) and ``SIMILAR TO`` as Flink's ``SqlLikeUtils``: SQL patterns → anchored regexes.

``%`` matches any sequence (newlines included), ``_`` any one character, the escape character makes the next
``%``/``_``/escape literal; every other character is literal. A pattern known at plan time compiles once; a pattern
computed per row goes through a small cache.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import Any

from strom.table.errors import TableRuntimeException
from strom.table.functions.bound_function import BoundFunction, arity, nullable_if_any, validation_error
from strom.table.functions.type_inference import is_string
from strom.table.logical_types import BooleanType, DataType, NullType

__all__ = ["bind", "like_to_regex", "similar_to_regex"]


def like_to_regex(pattern: str, escape: str | None = None) -> str:
    """The Python regex for a SQL LIKE *pattern* (Flink's ``sqlToRegexLike``)."""
    if escape is not None and len(escape) != 1:
        raise TableRuntimeException(f"LIKE: expected an ESCAPE of one character; got {escape!r}")
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if escape is not None and ch == escape:
            if i + 1 >= len(pattern) or pattern[i + 1] not in ("%", "_", escape):
                raise TableRuntimeException(f"LIKE: invalid escape sequence at {i} in pattern {pattern!r}")
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if ch == "%" else "." if ch == "_" else re.escape(ch))
        i += 1
    return "".join(out)


_SIMILAR_SPECIAL = set("|*+?{}()[]")


def similar_to_regex(pattern: str, escape: str | None = None) -> str:
    """The Python regex for a SQL ``SIMILAR TO`` *pattern*: LIKE's wildcards plus regex alternation/repetition."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if escape is not None and ch == escape and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        if ch == "%":
            out.append(".*")
        elif ch == "_":
            out.append(".")
        elif ch in _SIMILAR_SPECIAL:
            out.append(ch)
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


@functools.lru_cache(maxsize=256)
def _compiled(kind: str, pattern: str, escape: str | None) -> re.Pattern[str]:
    regex = like_to_regex(pattern, escape) if kind == "LIKE" else similar_to_regex(pattern, escape)
    return re.compile(regex, re.DOTALL)


def bind(op: str, arg_types: Sequence[DataType], literals: Sequence[Any]) -> BoundFunction:
    """LIKE / NOT LIKE / SIMILAR TO / NOT SIMILAR TO over (value, pattern[, escape])."""
    arity(op, arg_types, 2, 3)
    if not all(is_string(t) or isinstance(t, NullType) for t in arg_types):
        raise validation_error(op, "character string operands", arg_types)
    kind = "LIKE" if "LIKE" in op else "SIMILAR"
    negated = op.startswith("NOT")
    pattern = literals[1] if len(literals) > 1 else None
    escape = literals[2] if len(literals) > 2 else None
    result = nullable_if_any(BooleanType(), arg_types)
    if pattern is not None and (len(arg_types) == 2 or escape is not None):
        match = _compiled(kind, pattern, escape).fullmatch
        if negated:
            return BoundFunction(op, result, lambda v, *_: None if v is None else match(v) is None)
        return BoundFunction(op, result, lambda v, *_: None if v is None else match(v) is not None)

    def call(v: Any, p: Any, e: Any = None) -> bool | None:
        if v is None or p is None or (len(arg_types) == 3 and e is None):
            return None
        found = _compiled(kind, p, e).fullmatch(v) is not None
        return not found if negated else found

    fn: Callable[..., Any] = call
    return BoundFunction(op, result, fn)
