"""A built-in function bound to its argument types at plan time (Flink's ``BuiltInFunctionDefinition`` + its
``TypeInference`` + the generated call), and the helpers the function families build them with.

:class:`BoundFunction` is what :func:`strom.table.functions.resolve_function` returns: the result type and a plain
Python callable over Python values, specialized for the argument types (no per-call type dispatch). NULL handling is
inside ``call``: a *strict* function (most of Flink's) returns NULL when any argument is NULL — :func:`strict` wraps a
callable that never sees ``None``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo

from strom.table.errors import TableRuntimeException, ValidationException
from strom.table.logical_types import DataType

__all__ = [
    "BoundFunction",
    "FunctionContext",
    "Resolver",
    "arity",
    "cast_error",
    "nullable_if_any",
    "strict",
    "type_list",
    "validation_error",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class FunctionContext:
    """What a function may read besides its arguments: the session time zone (``table.local-time-zone``).

    ``now`` returns the current instant as a naive UTC ``datetime`` (injectable for tests; ``None`` = the clock).
    """

    local_time_zone: str = "UTC"
    now: Callable[[], Any] | None = None

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.local_time_zone)


DEFAULT_CONTEXT = FunctionContext()


@dataclass(frozen=True, slots=True)
class BoundFunction:
    """A function resolved for its argument types: ``call(*values)`` returns the result's Python value.

    ``deterministic`` is False for RAND, UUID, NOW, … (the planner must not constant-fold them).
    """

    name: str
    result_type: DataType
    call: Callable[..., Any]
    deterministic: bool = field(default=True, kw_only=True)


Resolver = Callable[[str, Sequence[DataType], Sequence[Any], FunctionContext], BoundFunction]
"""``(name, arg_types, literals, context) -> BoundFunction``: one per function name in a family's registry.
``literals[i]`` is argument i's value when it is a literal at plan time, else ``None`` (len == len(arg_types))."""


def type_list(arg_types: Sequence[DataType]) -> str:
    return ", ".join(str(t) for t in arg_types)


def validation_error(name: str, expected: str, arg_types: Sequence[DataType], hint: str = "") -> ValidationException:
    """The error for a call with arguments it cannot take: expected → got → hint."""
    tail = f"; {hint}" if hint else ""
    return ValidationException(f"{name}: expected {expected}; got {name}({type_list(arg_types)}){tail}")


def arity(name: str, arg_types: Sequence[DataType], low: int, high: int | None = None) -> None:
    """Raise unless ``low <= len(arg_types) <= high`` (``high=None``: exactly *low*; -1: unbounded)."""
    top = low if high is None else high
    n = len(arg_types)
    if n < low or (top >= 0 and n > top):
        count = str(low) if top == low else f"{low} or more" if top < 0 else f"{low} to {top}"
        raise validation_error(name, f"{count} argument{'s' if top != 1 else ''}", arg_types)


def strict(fn: Callable[..., Any], n_args: int) -> Callable[..., Any]:
    """*fn* with Flink's strict NULL rule: NULL when any argument is NULL (specialized for 1–3 arguments)."""
    if n_args == 0:
        return fn
    if n_args == 1:
        return lambda a: None if a is None else fn(a)
    if n_args == 2:
        return lambda a, b: None if a is None or b is None else fn(a, b)
    if n_args == 3:
        return lambda a, b, c: None if a is None or b is None or c is None else fn(a, b, c)

    def call(*args: Any) -> Any:
        for a in args:
            if a is None:
                return None
        return fn(*args)

    return call


def nullable_if_any(result: DataType, arg_types: Sequence[DataType]) -> DataType:
    """The result type of a strict function: nullable when any argument is."""
    return result.copy(nullable=any(t.is_nullable for t in arg_types))


def cast_error(kind: str, value: Any, target: DataType) -> TableRuntimeException:
    """A CAST failure: expected what fits the target → got the value → hint TRY_CAST."""
    return TableRuntimeException(
        f"CAST: expected {kind} that fits {target}; got {value!r}; use TRY_CAST to get NULL instead"
    )
