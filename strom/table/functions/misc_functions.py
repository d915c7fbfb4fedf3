"""Flink's remaining scalar built-ins: UUID, OVERLAY, TRANSLATE, ELT, ENCODE, DECODE, PARSE_URL, URL_ENCODE,
URL_DECODE, PRINTF, UNHEX.
"""

from __future__ import annotations

import urllib.parse
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from strom.table.functions.bound_function import (
    BoundFunction,
    FunctionContext,
    Resolver,
    arity,
    nullable_if_any,
    strict,
)
from strom.table.logical_types import MAX_LENGTH, DataType, VarBinaryType, VarCharType

__all__ = ["FUNCTIONS"]

STRING = VarCharType(MAX_LENGTH)
BYTES = VarBinaryType(MAX_LENGTH)


def _fixed(
    result: DataType, fn: Callable[..., Any], low: int, high: int | None = None, *, nullable: bool = False
) -> Resolver:
    def resolve(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
        arity(name, types, low, high)
        rtype = nullable_if_any(result, types)
        return BoundFunction(name, rtype.nullable() if nullable else rtype, strict(fn, len(types)))

    return resolve


def _uuid(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    arity(name, types, 0)
    return BoundFunction(name, VarCharType(36).copy(nullable=False), lambda: str(uuid.uuid4()), deterministic=False)


def _overlay(s: str, r: str, start: int, length: int | None = None) -> str:
    n = len(r) if length is None else length
    return s[: start - 1] + r + s[start - 1 + n :]


def _overlay_resolver(
    name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext
) -> BoundFunction:
    """OVERLAY(s PLACING r FROM i [FOR n]): VARCHAR(len(s) + len(r))."""
    arity(name, types, 3, 4)
    length = min(sum(int(getattr(t, "length", MAX_LENGTH)) for t in types[:2]), MAX_LENGTH)
    return BoundFunction(name, nullable_if_any(VarCharType(length), types), strict(_overlay, len(types)))


def _translate(s: str, src: str, dst: str) -> str:
    table = {ord(c): (dst[i] if i < len(dst) else None) for i, c in reversed(list(enumerate(src)))}
    return s.translate(table)


def _elt(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    arity(name, types, 2, -1)

    def call(i: Any, *values: Any) -> Any:
        if i is None or not 1 <= i <= len(values):
            return None
        return values[i - 1]

    return BoundFunction(name, types[1].nullable(), call)


def _parse_url(url: str, part: str, key: str | None = None) -> str | None:
    parsed = urllib.parse.urlsplit(url)
    part = part.upper()
    if part == "QUERY" and key is not None:
        values = urllib.parse.parse_qs(parsed.query, keep_blank_values=True).get(key)
        return values[0] if values else None
    values_by_part = {
        "HOST": parsed.hostname,
        "PATH": parsed.path,
        "QUERY": parsed.query or None,
        "REF": parsed.fragment or None,
        "PROTOCOL": parsed.scheme,
        "AUTHORITY": parsed.netloc,
        "FILE": parsed.path + ("?" + parsed.query if parsed.query else ""),
        "USERINFO": parsed.netloc.rpartition("@")[0] or None,
    }
    return values_by_part.get(part)


def _printf(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    arity(name, types, 1, -1)

    def call(fmt: Any, *args: Any) -> str | None:
        if fmt is None:
            return None
        return str(fmt) % tuple("null" if a is None else a for a in args)

    return BoundFunction(name, STRING.nullable(), call)


def _unhex(s: str) -> bytes | None:
    try:
        return bytes.fromhex(s if len(s) % 2 == 0 else "0" + s)
    except ValueError:
        return None


FUNCTIONS: dict[str, Resolver] = {
    "UUID": _uuid,
    "OVERLAY": _overlay_resolver,
    "TRANSLATE": _fixed(STRING, _translate, 3),
    "ELT": _elt,
    "ENCODE": _fixed(BYTES, lambda s, cs: s.encode(cs), 2),
    "DECODE": _fixed(STRING, lambda b, cs: bytes(b).decode(cs), 2),
    "PARSE_URL": _fixed(STRING, _parse_url, 2, 3, nullable=True),
    "URL_ENCODE": _fixed(STRING, lambda s: urllib.parse.quote_plus(s, safe="*"), 1, nullable=True),
    "URL_DECODE": _fixed(STRING, urllib.parse.unquote_plus, 1, nullable=True),
    "PRINTF": _printf,
    "UNHEX": _fixed(BYTES, _unhex, 1, nullable=True),
}
