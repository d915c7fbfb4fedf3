"""Flink's built-in string functions (``BuiltInFunctionDefinitions`` string family), bound per argument types.

Every function here is strict (NULL in → NULL out) unless its docstring says otherwise; positions are 1-based
as in SQL. Special syntax arrives as plain arguments: ``TRIM(BOTH 'x' FROM s)`` is ``TRIM('BOTH', 'x', s)`` (the
mode a literal), ``POSITION(a IN b)`` is ``POSITION(a, b)``, ``SUBSTRING(s FROM i FOR n)`` is ``SUBSTRING(s, i, n)``.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Sequence
from typing import Any

from strom.table.errors import TableRuntimeException
from strom.table.functions import regexp_functions
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
from strom.table.logical_constructed_types import MapType
from strom.table.logical_types import (
    MAX_LENGTH,
    BooleanType,
    CharType,
    DataType,
    IntType,
    LogicalTypeFamily,
    LogicalTypeRoot,
    NullType,
    VarCharType,
)

__all__ = ["FUNCTIONS"]

_R = LogicalTypeRoot
_F = LogicalTypeFamily
STRING = VarCharType(MAX_LENGTH)


def _check(name: str, types: Sequence[DataType], kinds: str) -> None:
    """*kinds*: one letter per argument — s string, i integer, n numeric, b binary, a any."""
    ok = len(types) == len(kinds)
    for t, k in zip(types, kinds, strict=False):
        if isinstance(t, NullType) or k == "a":
            continue
        if (
            (k == "s" and not is_string(t))
            or (k == "i" and not t.has_family(_F.INTEGER_NUMERIC))
            or (k == "n" and not t.has_family(_F.NUMERIC))
            or (k == "b" and not (t.has_family(_F.BINARY_STRING) or is_string(t)))
        ):
            ok = False
    if not ok:
        names = {"s": "STRING", "i": "INT", "n": "NUMERIC", "b": "BYTES or STRING", "a": "ANY"}
        raise validation_error(name, f"{name}({', '.join(names[k] for k in kinds)})", types)


def _simple(
    kinds: str | Sequence[str], result: DataType, fn: Callable[..., Any], *, always_nullable: bool = False
) -> Resolver:
    """A strict function over arguments of the given kinds (several signatures: one kinds string each); its result
    is nullable when an argument is, or always (``always_nullable``: Flink's type says so)."""
    signatures = [kinds] if isinstance(kinds, str) else list(kinds)

    def resolve(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
        for sig in signatures:
            if len(sig) == len(types):
                _check(name, types, sig)
                rtype = result.nullable() if always_nullable else nullable_if_any(result, types)
                return BoundFunction(name, rtype, strict(fn, len(types)))
        raise validation_error(name, " or ".join(f"{len(s)} arguments" for s in signatures), types)

    return resolve


def _same_string_type(fn: Callable[[str], str]) -> Resolver:
    """UPPER / LOWER / INITCAP: the argument's own string type."""

    def resolve(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
        _check(name, types, "s")
        result = STRING if isinstance(types[0], NullType) else types[0]
        return BoundFunction(name, nullable_if_any(result, types), strict(fn, 1))

    return resolve


def _substring(s: str, start: int, length: int | None = None) -> str | None:
    """SQL SUBSTRING: 1-based *start*; a start ≤ 0 counts from the end when negative, as Flink's."""
    n = len(s)
    if start < 0:
        begin = max(n + start, 0)
    elif start == 0:
        begin = 0
    else:
        begin = start - 1
    if length is None:
        return s[begin:]
    if length < 0:
        return None
    return s[begin : begin + length]


def _substring_resolver(
    name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext
) -> BoundFunction:
    arity(name, types, 2, 3)
    _check(name, types, "sii"[: len(types)])
    length = int(getattr(types[0], "length", MAX_LENGTH))
    result = VarCharType(length) if not isinstance(types[0], NullType) else STRING
    return BoundFunction(name, result, strict(_substring, len(types)))  # NULL for a negative length


def _concat(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    arity(name, types, 1, -1)
    _check(name, types, "s" * len(types))
    return BoundFunction(name, nullable_if_any(STRING, types), strict(lambda *a: "".join(a), len(types)))


def _concat_ws(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    arity(name, types, 2, -1)
    _check(name, types, "s" * len(types))

    def call(sep: Any, *parts: Any) -> str | None:
        if sep is None:
            return None
        return str(sep).join(p for p in parts if p is not None)

    return BoundFunction(name, nullable_if_any(STRING, types), call)


def _trim_call(mode: str, chars: str, s: str) -> str:
    if mode == "LEADING":
        return s.lstrip(chars)
    if mode == "TRAILING":
        return s.rstrip(chars)
    return s.strip(chars)


def _trim(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    """TRIM(s) or TRIM(mode, chars, s) — mode 'BOTH' / 'LEADING' / 'TRAILING' a literal."""
    arity(name, types, 1, 3)
    if len(types) == 1:
        _check(name, types, "s")
        return BoundFunction(name, nullable_if_any(_varying(types[-1]), types), strict(lambda s: s.strip(" "), 1))
    if len(types) == 2:
        _check(name, types, "ss")
        return BoundFunction(name, nullable_if_any(_varying(types[-1]), types), strict(lambda c, s: s.strip(c), 2))
    _check(name, types, "sss")
    mode = str(literals[0]).upper() if literals and literals[0] is not None else "BOTH"
    call = strict(lambda m, c, s: _trim_call(mode, c, s), 3)
    return BoundFunction(name, nullable_if_any(_varying(types[-1]), types[1:]), call)


def _varying(t: DataType) -> DataType:
    return VarCharType(int(getattr(t, "length", MAX_LENGTH))) if is_string(t) else STRING


def _side_trim(strip: Callable[[str, str], str]) -> Resolver:
    def resolve(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
        arity(name, types, 1, 2)
        _check(name, types, "s" * len(types))
        fn = (lambda s: strip(s, " ")) if len(types) == 1 else strip
        return BoundFunction(name, nullable_if_any(_varying(types[0]), types), strict(fn, len(types)))

    return resolve


def _replace(s: str, old: str, new: str) -> str:
    return s.replace(old, new)


def _locate(sub: str, s: str, start: int = 1) -> int:
    return s.find(sub, max(start, 1) - 1) + 1


def _pad(left: bool) -> Callable[[str, int, str], str | None]:
    def pad(s: str, n: int, fill: str) -> str | None:
        if n < 0:
            return None
        if len(s) >= n:
            return s[:n]
        if fill == "":
            return None
        need = n - len(s)
        filler = (fill * (need // len(fill) + 1))[:need]
        return filler + s if left else s + filler

    return pad


def _initcap(s: str) -> str:
    out, start = [], True
    for ch in s:
        out.append(ch.upper() if start else ch.lower())
        start = not ch.isalnum()
    return "".join(out)


def _split_index(s: str, sep: str, index: int) -> str | None:
    if index < 0 or sep == "":
        return None
    parts = s.split(sep)
    return parts[index] if index < len(parts) else None


def _repeat(s: str, n: int) -> str:
    return s * n if n > 0 else ""


def _left(s: str, n: int) -> str:
    return s[: max(n, 0)]


def _right(s: str, n: int) -> str:
    return s[len(s) - n :] if n > 0 else ""


def _ascii(s: str) -> int:
    return ord(s[0]) if s else 0


def _chr(n: int) -> str:
    return "" if n < 0 else chr(n % 256)


def _digest(algorithm: str) -> Callable[[Any], str]:
    return lambda v: hashlib.new(algorithm, v.encode("utf-8") if isinstance(v, str) else bytes(v)).hexdigest()


def _sha2(s: Any, bits: int) -> str | None:
    if bits not in (224, 256, 384, 512):
        return None
    return _digest(f"sha{bits}")(s)


def _to_base64(v: Any) -> str:
    return base64.b64encode(v.encode("utf-8") if isinstance(v, str) else bytes(v)).decode("ascii")


def _from_base64(v: Any) -> str:
    try:
        return base64.b64decode(v, validate=True).decode("utf-8", errors="replace")
    except ValueError as exc:
        raise TableRuntimeException(f"FROM_BASE64: expected base64 text; got {v!r} ({exc})") from None


def _str_to_map(s: str, pair_sep: str = ",", kv_sep: str = "=") -> dict[str, str | None]:
    result: dict[str, str | None] = {}
    if s == "":
        return result
    for pair in s.split(pair_sep):
        key, found, value = pair.partition(kv_sep)
        result[key] = value if found else None
    return result


def _str_to_map_resolver(
    name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext
) -> BoundFunction:
    if len(types) not in (1, 3):
        raise validation_error(name, "STR_TO_MAP(STRING) or STR_TO_MAP(STRING, STRING, STRING)", types)
    _check(name, types, "s" * len(types))
    return BoundFunction(name, MapType(STRING, STRING), strict(_str_to_map, len(types)))


def _left_right(fn: Callable[[str, int], str]) -> Resolver:
    """LEFT / RIGHT: VARCHAR of the argument's length, always nullable."""

    def resolve(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
        _check(name, types, "si")
        return BoundFunction(name, _varying(types[0]).nullable(), strict(fn, 2))

    return resolve


def _is_digit(s: str) -> bool:
    return s != "" and all("0" <= c <= "9" for c in s)


def _is_alpha(s: str) -> bool:
    return s != "" and s.isalpha()


def _is_decimal(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return s.strip() == s and s.lower() not in ("nan", "inf", "-inf", "+inf", "infinity", "-infinity")


def _not_null_result(fn: Callable[[str], bool]) -> Resolver:
    """IS_DIGIT / IS_ALPHA / IS_DECIMAL: FALSE (not NULL) for a NULL argument, as Flink's."""

    def resolve(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
        _check(name, types, "s")
        return BoundFunction(name, BooleanType(False), lambda s: False if s is None else fn(s))

    return resolve


FUNCTIONS: dict[str, Resolver] = {
    "UPPER": _same_string_type(str.upper),
    "LOWER": _same_string_type(str.lower),
    "INITCAP": _same_string_type(_initcap),
    "CHAR_LENGTH": _simple("s", IntType(), len),
    "CHARACTER_LENGTH": _simple("s", IntType(), len),
    "SUBSTRING": _substring_resolver,
    "SUBSTR": _substring_resolver,
    "CONCAT": _concat,
    "CONCAT_WS": _concat_ws,
    "TRIM": _trim,
    "BTRIM": _simple("s", STRING, lambda s: s.strip(" ")),
    "LTRIM": _side_trim(str.lstrip),
    "RTRIM": _side_trim(str.rstrip),
    "REPLACE": _simple("sss", STRING, _replace),
    "POSITION": _simple("ss", IntType(), lambda sub, s: s.find(sub) + 1),
    "LOCATE": _simple(["ss", "ssi"], IntType(), _locate),
    "INSTR": _simple("ss", IntType(), lambda s, sub: s.find(sub) + 1),
    "LPAD": _simple("sis", STRING, _pad(True)),
    "RPAD": _simple("sis", STRING, _pad(False)),
    "SPLIT_INDEX": _simple("ssi", STRING, _split_index, always_nullable=True),
    "REVERSE": _simple("s", STRING, lambda s: s[::-1], always_nullable=True),
    "REPEAT": _simple("si", STRING, _repeat),
    "LEFT": _left_right(_left),
    "RIGHT": _left_right(_right),
    "ASCII": _simple("s", IntType(), _ascii),
    "CHR": _simple("i", STRING, _chr, always_nullable=True),
    "MD5": _simple("b", CharType(32), _digest("md5")),
    "SHA1": _simple("b", CharType(40), _digest("sha1")),
    "SHA224": _simple("b", CharType(56), _digest("sha224")),
    "SHA256": _simple("b", CharType(64), _digest("sha256")),
    "SHA384": _simple("b", CharType(96), _digest("sha384")),
    "SHA512": _simple("b", CharType(128), _digest("sha512")),
    "SHA2": _simple("bi", VarCharType(128), _sha2),
    "TO_BASE64": _simple("b", STRING, _to_base64),
    "FROM_BASE64": _simple("b", STRING, _from_base64),
    "STR_TO_MAP": _str_to_map_resolver,
    "IS_DIGIT": _not_null_result(_is_digit),
    "IS_ALPHA": _not_null_result(_is_alpha),
    "IS_DECIMAL": _not_null_result(_is_decimal),
    "STARTSWITH": _simple("ss", BooleanType(), lambda s, p: s.startswith(p)),
    "ENDSWITH": _simple("ss", BooleanType(), lambda s, p: s.endswith(p)),
    **regexp_functions.FUNCTIONS,
}
