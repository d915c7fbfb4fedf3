"""Name resolution (Calcite's ``SqlValidatorScope``): the fields visible to an expression and their qualifiers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

from strom.table.errors import ValidationException
from strom.table.planner.logical import RowType
from strom.table.planner.rex import RexInputRef
from strom.table.sql.parser import at
from strom.table.types import DataType

__all__ = ["Scope", "ScopeField"]


@dataclass(frozen=True, slots=True)
class ScopeField:
    qualifier: str | None
    name: str
    type: DataType


class Scope:
    """The input fields of a relational expression, in order, with the table alias each came from."""

    def __init__(self, fields: Sequence[ScopeField]) -> None:
        self.fields = tuple(fields)

    @classmethod
    def of(cls, row_type: RowType, qualifier: str | None = None) -> Scope:
        return cls([ScopeField(qualifier, n, t) for n, t in zip(row_type.names, row_type.types, strict=True)])

    def join(self, other: Scope) -> Scope:
        return Scope([*self.fields, *other.fields])

    def requalify(self, qualifier: str) -> Scope:
        return Scope([ScopeField(qualifier, f.name, f.type) for f in self.fields])

    def indices(self, qualifier: str | None = None) -> list[int]:
        return [i for i, f in enumerate(self.fields) if qualifier is None or f.qualifier == qualifier]

    def resolve(self, column: exp.Column) -> RexInputRef:
        name, table = column.name, column.table or None
        matches = [i for i, f in enumerate(self.fields) if f.name == name and (table is None or f.qualifier == table)]
        if not matches:  # Flink is case-sensitive; accept a unique case-insensitive match as Calcite's lenient mode
            matches = [
                i
                for i, f in enumerate(self.fields)
                if f.name.lower() == name.lower() and (table is None or (f.qualifier or "").lower() == table.lower())
            ]
            if len(matches) > 1:
                matches = []
        if not matches:
            if table is not None and not any(f.qualifier == table for f in self.fields):
                raise ValidationException(
                    f"SQL validation failed{at(column)}: Table '{table}' not found; "
                    f"expected one of: {', '.join(sorted({f.qualifier for f in self.fields if f.qualifier}))}"
                )
            shown = ", ".join(f.name for f in self.fields)
            where = f"table '{table}'" if table else "any table"
            raise ValidationException(
                f"SQL validation failed{at(column)}: Column '{name}' not found in {where}; expected one of: {shown}"
            )
        if len(matches) > 1:
            raise ValidationException(
                f"SQL validation failed{at(column)}: Column '{name}' is ambiguous; "
                "hint: qualify it with its table alias (t.column)"
            )
        index = matches[0]
        return RexInputRef(index, self.fields[index].type, self.fields[index].name)

    def row_type(self) -> RowType:
        return RowType(tuple(f.name for f in self.fields), tuple(f.type for f in self.fields))
