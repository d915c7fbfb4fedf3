"""Flink's JSON functions: JSON_VALUE, JSON_QUERY, JSON_EXISTS, JSON_OBJECT, JSON_ARRAY, JSON_STRING, JSON, IS JSON.

Argument conventions (the SQL clauses arrive as string literals):

- ``JSON_VALUE(j, path [RETURNING t] [<b> ON EMPTY] [<b> ON ERROR])`` → ``JSON_VALUE(j, path, empty_mode,
  empty_default, error_mode, error_default)`` with ``return_type=t``; a mode is ``'NULL'``, ``'ERROR'`` or
  ``'DEFAULT'`` (the default value then the next argument, else a NULL literal). As Flink 2.3 does, a missing path
  gives NULL whatever ON EMPTY says, and a JSON value of another type than RETURNING fails whatever ON ERROR says.
- ``JSON_QUERY(j, path [WITH [CONDITIONAL] WRAPPER] [<b> ON EMPTY] [<b> ON ERROR])`` → ``JSON_QUERY(j, path,
  wrapper, empty_mode, error_mode)``: wrapper ``'WITHOUT'`` / ``'CONDITIONAL'`` / ``'UNCONDITIONAL'``, modes
  ``'NULL'`` / ``'ERROR'`` / ``'EMPTY ARRAY'`` / ``'EMPTY OBJECT'``.
- ``JSON_EXISTS(j, path [<b> ON ERROR])`` → ``JSON_EXISTS(j, path[, 'TRUE' | 'FALSE' | 'UNKNOWN' | 'ERROR'])``.
- ``JSON_OBJECT(KEY k VALUE v, … [NULL | ABSENT] ON NULL)`` → ``JSON_OBJECT(null_mode, k1, v1, …)``;
  ``JSON_ARRAY(v, … [NULL | ABSENT] ON NULL)`` → ``JSON_ARRAY(null_mode, v1, …)``.
- ``v IS JSON [VALUE | SCALAR | ARRAY | OBJECT]`` → ``IS JSON(v, kind)``.

Paths: ``$``, ``.key``, ``['key']``/``["key"]``, ``[n]``, ``[*]``, with ``lax``/``strict`` (lax: a missing member
is empty; strict: an error). Output JSON is compact (``{"a":1}``) as Flink's Jackson writes it.
"""

from __future__ import annotations

import decimal
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from strom.table.errors import TableRuntimeException, ValidationException
from strom.table.functions.bound_function import (
    BoundFunction,
    FunctionContext,
    Resolver,
    arity,
    nullable_if_any,
    validation_error,
)
from strom.table.functions.cast import cast_function
from strom.table.functions.cast_to_string import format_double, to_string_function
from strom.table.logical_types import (
    MAX_LENGTH,
    BooleanType,
    DataType,
    LogicalTypeFamily,
    LogicalTypeRoot,
    VarCharType,
)

__all__ = ["FUNCTIONS", "RawJson", "json_path"]

STRING = VarCharType(MAX_LENGTH)
_R = LogicalTypeRoot


class _Missing:
    """A path that selects nothing: one object in every process (pickled by name, so a bound function shipped to a
    TaskManager compares it by identity with the one ``_walk`` returns there)."""

    def __reduce__(self) -> str:
        return "_MISSING"


_MISSING = _Missing()
_STEP = re.compile(r"\.([A-Za-z_$][\w$]*)|\[\s*(?:'([^']*)'|\"([^\"]*)\"|(\d+)|(\*))\s*\]|\.\*")


class RawJson(str):
    """A string that is JSON text already (JSON_OBJECT / JSON_ARRAY / JSON results): embedded unquoted."""

    __slots__ = ()


class _PathError(Exception):
    """A JSON path that does not apply to the value (an index out of bounds, a missing member, a step into a scalar)."""


def json_path(path: str) -> tuple[bool, list[Any]]:
    """``(strict, steps)`` of a JSON path; a step is a key, an index or ``'*'``."""
    text = path.strip()
    strict_mode = text.startswith("strict")
    text = re.sub(r"^(lax|strict)\s+", "", text)
    if not text.startswith("$"):
        raise ValidationException(f"JSON path: expected a path starting with '$'; got {path!r}")
    steps: list[Any] = []
    pos = 1
    while pos < len(text):
        m = _STEP.match(text, pos)
        if m is None:
            raise ValidationException(f"JSON path: expected .key, ['key'] or [n] at {pos}; got {path!r}")
        key = m.group(1) or m.group(2) or m.group(3)
        steps.append(key if key is not None else int(m.group(4)) if m.group(4) else "*")
        pos = m.end()
    return strict_mode, steps


def _walk(doc: Any, steps: list[Any], strict_mode: bool) -> Any:
    current = [doc]
    wildcard = False
    for step in steps:
        nxt: list[Any] = []
        for node in current:
            if step == "*":
                wildcard = True
                nxt.extend(node if isinstance(node, list) else node.values() if isinstance(node, dict) else [])
            elif isinstance(step, int) and isinstance(node, list):
                if step < len(node):
                    nxt.append(node[step])
                elif strict_mode:
                    raise _PathError(f"index {step} out of bounds")
            elif isinstance(step, str) and isinstance(node, dict):
                if step in node:
                    nxt.append(node[step])
                elif strict_mode:
                    raise _PathError(f"no member {step!r}")
            elif strict_mode:
                raise _PathError(f"cannot apply {step!r} to {type(node).__name__}")
        current = nxt
    if wildcard:
        return current
    return current[0] if current else _MISSING


def _load(text: str) -> Any:
    return json.loads(text, parse_float=decimal.Decimal)


def _dump(value: Any) -> str:
    """Compact JSON as Flink's Jackson writes it: DECIMALs with their scale (``1.50``), doubles as Java's."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, RawJson):
        return _dump(_load(value))
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int | decimal.Decimal):
        return str(value)
    if isinstance(value, float):
        return format_double(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(str(k), ensure_ascii=False)}:{_dump(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(_dump(v) for v in value) + "]"
    raise TableRuntimeException(f"JSON: expected a JSON value; got {type(value).__name__}")


def _scalar_text(value: Any) -> str:
    """A JSON scalar as JSON_VALUE returns it: numbers as Java's ``BigDecimal.toString`` (``1E+2``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


_JSON_KIND: dict[LogicalTypeRoot, tuple[type, ...]] = {
    LogicalTypeRoot.BOOLEAN: (bool,),
    LogicalTypeRoot.TINYINT: (int,),
    LogicalTypeRoot.SMALLINT: (int,),
    LogicalTypeRoot.INTEGER: (int,),
    LogicalTypeRoot.BIGINT: (int,),
    LogicalTypeRoot.FLOAT: (int, decimal.Decimal),
    LogicalTypeRoot.DOUBLE: (int, decimal.Decimal),
    LogicalTypeRoot.DECIMAL: (int, decimal.Decimal),
}


def _mode(literals: Sequence[Any], i: int, default: str) -> str:
    return str(literals[i]).upper() if len(literals) > i and literals[i] is not None else default


def _json_value(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext,
                return_type: DataType | None = None) -> BoundFunction:  # fmt: skip
    arity(name, types, 2, 6)
    result = (return_type or STRING).nullable()
    to_result = cast_function(STRING, result, context=ctx)
    error_mode = _mode(literals, 4, "NULL")  # ON EMPTY (literal 2) does not change Flink 2.3's NULL
    defaults = [cast_function(types[i], result, context=ctx) if len(types) > i else (lambda v: v) for i in (3, 5)]
    kinds = _JSON_KIND.get(result.type_root)

    def on(mode: str, default: Any, conv: Callable[[Any], Any], why: str) -> Any:
        if mode == "ERROR":
            raise TableRuntimeException(f"JSON_VALUE: {why}")
        return conv(default) if mode == "DEFAULT" else None

    def call(
        text: Any, path: Any, _em: Any = None, empty_default: Any = None, _er: Any = None, error_default: Any = None
    ) -> Any:
        if text is None or path is None:
            return None
        try:
            strict_mode, steps = json_path(path)
            value = _walk(_load(text), steps, strict_mode)
        except (ValueError, _PathError, ValidationException) as exc:
            return on(error_mode, error_default, defaults[1], str(exc))
        if value is _MISSING or value is None:
            return None  # Flink 2.3 returns NULL for a missing path whatever ON EMPTY says
        if isinstance(value, dict | list):
            return on(error_mode, error_default, defaults[1], "expected a scalar value; got an object or array")
        if kinds is not None and (not isinstance(value, kinds) or isinstance(value, bool) != (bool in kinds)):
            raise TableRuntimeException(  # Flink: a ClassCastException, whatever ON ERROR says
                f"JSON_VALUE: expected a JSON value of {result} for RETURNING; got {_dump(value)}"
            )
        return to_result(_scalar_text(value))

    return BoundFunction(name, result, call)


def _json_query(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext,
                return_type: DataType | None = None) -> BoundFunction:  # fmt: skip
    arity(name, types, 2, 5)
    wrapper, error_mode = _mode(literals, 2, "WITHOUT"), _mode(literals, 4, "NULL")  # ON EMPTY: as JSON_VALUE
    fallback = {"NULL": None, "EMPTY ARRAY": "[]", "EMPTY OBJECT": "{}"}

    def on(mode: str, why: str) -> Any:
        if mode == "ERROR":
            raise TableRuntimeException(f"JSON_QUERY: {why}")
        return fallback.get(mode)

    def call(text: Any, path: Any, *_: Any) -> Any:
        if text is None or path is None:
            return None
        try:
            strict_mode, steps = json_path(path)
            value = _walk(_load(text), steps, strict_mode)
            if value is _MISSING:
                return None  # Flink 2.3 returns NULL for a missing path whatever ON EMPTY says
            if wrapper == "UNCONDITIONAL" or (wrapper == "CONDITIONAL" and not isinstance(value, list | dict)):
                value = [value]
            if not isinstance(value, list | dict):
                raise _PathError("expected an object or array; got a scalar")
            return _dump(value)  # a plain string: JSON_OBJECT quotes it, as Flink
        except (ValueError, _PathError, ValidationException) as exc:
            return on(error_mode, str(exc))

    return BoundFunction(name, (return_type or STRING).nullable(), call)


def _json_exists(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    arity(name, types, 2, 3)
    error_mode = _mode(literals, 2, "FALSE")

    def call(text: Any, path: Any, *_: Any) -> bool | None:
        if text is None or path is None:
            return None
        try:
            strict_mode, steps = json_path(path)
            return _walk(_load(text), steps, strict_mode) not in (_MISSING, None)
        except (ValueError, _PathError, ValidationException) as exc:
            if error_mode == "ERROR":
                raise TableRuntimeException(f"JSON_EXISTS: {exc}") from exc
            return {"TRUE": True, "FALSE": False}.get(error_mode)

    return BoundFunction(name, BooleanType(), call)


def _to_json_value(t: DataType, ctx: FunctionContext) -> Callable[[Any], Any]:
    """A SQL value → the Python structure ``json.dumps`` writes as Flink's JSON for it."""
    root = t.type_root
    if root in (_R.CHAR, _R.VARCHAR):
        return lambda v: json.loads(v) if isinstance(v, RawJson) else v
    if root in (_R.BOOLEAN, _R.TINYINT, _R.SMALLINT, _R.INTEGER, _R.BIGINT, _R.DECIMAL, _R.DOUBLE, _R.FLOAT):
        return lambda v: v
    if root is _R.ARRAY:
        element = _nullable_json(t.children[0], ctx)
        return lambda v: [element(x) for x in v]
    if root is _R.MAP:
        key, value = to_string_function(t.children[0], ctx), _nullable_json(t.children[1], ctx)
        return lambda v: {key(k): value(x) for k, x in v.items()}
    if root is _R.ROW:
        names = [f.name for f in getattr(t, "fields", ())]
        fields = [_nullable_json(c, ctx) for c in t.children]
        return lambda v: {n: f(x) for n, f, x in zip(names, fields, v, strict=True)}
    if t.has_family(LogicalTypeFamily.DATETIME) or t.has_family(LogicalTypeFamily.INTERVAL):
        raise ValidationException(f"JSON: expected a value of a type JSON can hold; got {t} (not scalar in Flink)")
    return to_string_function(t, ctx)


def _nullable_json(t: DataType, ctx: FunctionContext) -> Callable[[Any], Any]:
    conv = _to_json_value(t, ctx)
    return lambda v: None if v is None else conv(v)


def _json_object(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    if len(types) % 2 != 1:
        raise validation_error(name, "JSON_OBJECT(null_mode, key, value, …)", types)
    absent = _mode(literals, 0, "NULL") == "ABSENT"
    convs = [_nullable_json(t, ctx) for t in types[2::2]]

    def call(_mode: Any, *kv: Any) -> RawJson:
        obj: dict[str, Any] = {}
        for i, conv in enumerate(convs):
            key, value = kv[2 * i], kv[2 * i + 1]
            if key is None:
                raise TableRuntimeException("JSON_OBJECT: expected a non-NULL key; got NULL")
            if value is None and absent:
                continue
            obj[key] = conv(value)
        return RawJson(_dump(obj))

    return BoundFunction(name, STRING.not_null(), call)


def _json_array(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    arity(name, types, 1, -1)
    absent = _mode(literals, 0, "ABSENT") == "ABSENT"
    convs = [_nullable_json(t, ctx) for t in types[1:]]

    def call(_mode: Any, *values: Any) -> RawJson:
        items = [c(v) for c, v in zip(convs, values, strict=True) if not (v is None and absent)]
        return RawJson(_dump(items))

    return BoundFunction(name, STRING.not_null(), call)


def _json_string(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    arity(name, types, 1)
    conv = _to_json_value(types[0], ctx)
    return BoundFunction(name, nullable_if_any(STRING, types), lambda v: None if v is None else _dump(conv(v)))


def _json_raw(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    arity(name, types, 1)
    return BoundFunction(name, STRING.copy(nullable=types[0].is_nullable), lambda v: None if v is None else RawJson(v))


def _is_json(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    arity(name, types, 1, 2)
    kind = _mode(literals, 1, "VALUE")
    accept: dict[str, Callable[[Any], bool]] = {
        "VALUE": lambda d: True,
        "SCALAR": lambda d: not isinstance(d, dict | list),
        "ARRAY": lambda d: isinstance(d, list),
        "OBJECT": lambda d: isinstance(d, dict),
    }
    test = accept[kind]

    def call(text: Any, *_: Any) -> bool:
        if text is None:
            return False
        try:
            return test(_load(text))
        except ValueError:
            return False

    return BoundFunction(name, BooleanType(False), call)


FUNCTIONS: dict[str, Resolver] = {
    "JSON_EXISTS": _json_exists,
    "JSON_OBJECT": _json_object,
    "JSON_ARRAY": _json_array,
    "JSON_STRING": _json_string,
    "JSON": _json_raw,
    "IS JSON": _is_json,
}
RETURNING: dict[str, Callable[..., BoundFunction]] = {"JSON_VALUE": _json_value, "JSON_QUERY": _json_query}
"""Functions with a RETURNING clause: called with ``return_type=``."""
