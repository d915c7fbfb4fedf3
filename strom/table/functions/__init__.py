"""Flink's built-in scalar functions, operators and CAST, bound to argument types at plan time (contract §4).

- :func:`resolve_function` ``(name, arg_types) -> BoundFunction``: the built-in scalar functions
  (:mod:`.builtin_functions` lists them by family);
- :func:`resolve_operator` ``(op, arg_types) -> BoundFunction``: ``+ - * / % = <> < <= > >= AND OR NOT IS … LIKE
  BETWEEN IN ||`` (:mod:`.operators`);
- :func:`cast_function` ``(from_type, to_type, *, try_cast=False) -> callable``: CAST / TRY_CAST (:mod:`.cast`).

A :class:`BoundFunction` has the result type and ``call`` over Python values (NULL handling inside). Optional
keyword arguments: ``literals`` (argument values known at plan time, ``None`` elsewhere — LIKE patterns, IN lists,
time units, format strings) and ``context`` (:class:`FunctionContext`: the session time zone). The types of SQL
literals as Flink's planner gives them: :mod:`.sql_literals`; CASE's type: :func:`case_result_type`.
"""

from __future__ import annotations

from strom.table.functions.bound_function import BoundFunction, FunctionContext
from strom.table.functions.builtin_functions import function_names, resolve_function
from strom.table.functions.cast import cast_function
from strom.table.functions.conditional_functions import case_result_type
from strom.table.functions.operators import resolve_operator

__all__ = [
    "BoundFunction",
    "FunctionContext",
    "case_result_type",
    "cast_function",
    "function_names",
    "resolve_function",
    "resolve_operator",
]
