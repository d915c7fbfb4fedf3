"""Built-in keyed aggregations: ``sum``, ``min``, ``max``, ``min_by``, ``max_by`` (Flink's
``SumAggregator`` / ``ComparableAggregator``).

A field is a tuple/list index or an attribute name (namedtuples, dataclasses, plain objects; dict keys
for mappings). ``sum``/``min``/``max`` keep the other fields of the first record of the key and update
only the field; ``min_by``/``max_by`` return the whole record holding the extreme (the first on ties).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from strom.api.functions import ReduceFunction
from strom.exceptions import InvalidProgramError

__all__ = ["ComparableAggregator", "FieldAccessor", "SumAggregator"]


class FieldAccessor:
    def __init__(self, field: int | str) -> None:
        if isinstance(field, bool) or not isinstance(field, int | str):
            raise InvalidProgramError(
                f"an aggregation field must be a tuple index (int) or an attribute name (str); got {field!r}"
            )
        self.field = field

    def get(self, value: Any) -> Any:
        f = self.field
        try:
            if isinstance(f, int):
                return value[f]
            if isinstance(value, Mapping):
                return value[f]
            return getattr(value, f)
        except (IndexError, KeyError, AttributeError, TypeError) as exc:
            raise InvalidProgramError(
                f"aggregation field {f!r} does not exist on a {type(value).__name__} ({value!r:.60}); "
                "hint: use a valid tuple index or attribute name"
            ) from exc

    def set(self, value: Any, new: Any) -> Any:
        f = self.field
        if isinstance(f, int):
            if isinstance(value, tuple) and not hasattr(value, "_fields"):
                return (*value[:f], new, *value[f + 1 :]) if f != -1 else (*value[:-1], new)
            if isinstance(value, tuple):  # namedtuple
                return value._replace(**{value._fields[f]: new})  # type: ignore[attr-defined]
            out = list(value)
            out[f] = new
            return type(value)(out) if not isinstance(value, list) else out
        if isinstance(value, Mapping):
            return {**value, f: new}
        if hasattr(value, "_replace"):
            return value._replace(**{f: new})
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return dataclasses.replace(value, **{f: new})
        out = copy.copy(value)
        setattr(out, f, new)
        return out


class SumAggregator(ReduceFunction[Any]):
    def __init__(self, field: int | str) -> None:
        self.accessor = FieldAccessor(field)
        #: a field index of plain tuples, summed without the accessor's calls (the per-record path of a keyed
        #: ``sum(i)`` and of its BATCH combiner); other values and fields take the accessor
        self._index = field if isinstance(field, int) and not isinstance(field, bool) and field >= 0 else -1

    def reduce(self, value1: Any, value2: Any) -> Any:
        f = self._index
        if f >= 0 and type(value1) is tuple and type(value2) is tuple:
            try:  # concatenation: faster than unpacking into a new tuple
                return value1[:f] + (value1[f] + value2[f],) + value1[f + 1 :]  # noqa: RUF005
            except IndexError:
                pass  # a short tuple: the accessor explains
        a = self.accessor
        return a.set(value1, a.get(value1) + a.get(value2))


class ComparableAggregator(ReduceFunction[Any]):
    def __init__(self, field: int | str, kind: str, *, by: bool) -> None:
        self.accessor = FieldAccessor(field)
        self.kind = kind
        self.by = by
        self._better: Callable[[Any, Any], bool] = (
            (lambda new, old: new < old) if kind == "min" else (lambda new, old: new > old)
        )

    def reduce(self, value1: Any, value2: Any) -> Any:
        a = self.accessor
        old, new = a.get(value1), a.get(value2)
        if self.by:
            return value2 if self._better(new, old) else value1
        return a.set(value1, new) if self._better(new, old) else value1
