"""PyFlink's ``Expression`` (``pyflink.table.expression``): Table API expressions, built on sqlglot trees.

``col('a') + 1``, ``col('b').alias('x')``, ``col('c').cast(DataTypes.STRING())``, ``col('w').count``: each
expression wraps the SQL expression it stands for, so the Table API goes through the same validation, typing and
planning as SQL (Flink converts both into the same ``RexNode``\\ s).
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from strom.table.sql.flink_dialect import FlinkType

__all__ = ["Expression", "to_sql_expression"]


def to_sql_expression(value: Any) -> exp.Expr:
    """An :class:`Expression`, a column name or a Python literal as a sqlglot expression."""
    if isinstance(value, Expression):
        return value._node.copy()
    if isinstance(value, exp.Expr):
        return value
    if value is None:
        return exp.Null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int | float):
        return exp.Literal.number(value) if value >= 0 else exp.Neg(this=exp.Literal.number(-value))
    if isinstance(value, str):
        return exp.Literal.string(value)
    import decimal

    if isinstance(value, decimal.Decimal):
        return exp.Literal.number(str(value))
    raise TypeError(f"expected an Expression or a literal; got a {type(value).__name__}: {value!r}")


WINDOW_PROPERTIES = {"start": "__WINDOW_START", "end": "__WINDOW_END", "rowtime": "__WINDOW_ROWTIME"}


def _binary(cls: type[exp.Expr], left: Any, right: Any) -> Expression:
    return Expression(exp.Paren(this=cls(this=to_sql_expression(left), expression=to_sql_expression(right))))


def _call(name: str, *args: Any) -> Expression:
    return Expression(exp.Anonymous(this=name, expressions=[to_sql_expression(a) for a in args]))


class Expression:
    """A Table API expression (immutable)."""

    __slots__ = ("_node",)

    def __init__(self, node: exp.Expr) -> None:
        self._node = node

    def __str__(self) -> str:
        from strom.table.sql.flink_dialect import FlinkDialect

        return self._node.sql(dialect=FlinkDialect)

    __repr__ = __str__

    def as_summary_string(self) -> str:
        return str(self)

    # -- arithmetic and comparison ---------------------------------------------------------------------
    def __add__(self, other: Any) -> Expression:
        return _binary(exp.Add, self, other)

    def __radd__(self, other: Any) -> Expression:
        return _binary(exp.Add, other, self)

    def __sub__(self, other: Any) -> Expression:
        return _binary(exp.Sub, self, other)

    def __rsub__(self, other: Any) -> Expression:
        return _binary(exp.Sub, other, self)

    def __mul__(self, other: Any) -> Expression:
        return _binary(exp.Mul, self, other)

    def __rmul__(self, other: Any) -> Expression:
        return _binary(exp.Mul, other, self)

    def __truediv__(self, other: Any) -> Expression:
        return _binary(exp.Div, self, other)

    def __rtruediv__(self, other: Any) -> Expression:
        return _binary(exp.Div, other, self)

    def __mod__(self, other: Any) -> Expression:
        return _binary(exp.Mod, self, other)

    def __neg__(self) -> Expression:
        return Expression(exp.Neg(this=to_sql_expression(self)))

    def __eq__(self, other: Any) -> Expression:  # type: ignore[override]
        return _binary(exp.EQ, self, other)

    def __ne__(self, other: Any) -> Expression:  # type: ignore[override]
        return _binary(exp.NEQ, self, other)

    def __lt__(self, other: Any) -> Expression:
        return _binary(exp.LT, self, other)

    def __le__(self, other: Any) -> Expression:
        return _binary(exp.LTE, self, other)

    def __gt__(self, other: Any) -> Expression:
        return _binary(exp.GT, self, other)

    def __ge__(self, other: Any) -> Expression:
        return _binary(exp.GTE, self, other)

    def __and__(self, other: Any) -> Expression:
        return _binary(exp.And, self, other)

    def __or__(self, other: Any) -> Expression:
        return _binary(exp.Or, self, other)

    def __invert__(self) -> Expression:
        return Expression(exp.Not(this=to_sql_expression(self)))

    __hash__ = None  # type: ignore[assignment]

    # -- naming, casting, null tests ------------------------------------------------------------------
    def alias(self, name: str, *extra_names: str) -> Expression:
        if extra_names:
            return Expression(
                exp.Alias(this=to_sql_expression(self), alias=exp.to_identifier(",".join((name, *extra_names))))
            )
        return Expression(exp.Alias(this=to_sql_expression(self), alias=exp.to_identifier(name, quoted=True)))

    # -- group windows (``col('w').start``) and intervals (``lit(1).seconds``) -------------------------------
    @property
    def start(self) -> Expression:
        return _call(WINDOW_PROPERTIES["start"], self)

    @property
    def end(self) -> Expression:
        return _call(WINDOW_PROPERTIES["end"], self)

    @property
    def rowtime(self) -> Expression:
        return _call(WINDOW_PROPERTIES["rowtime"], self)

    @property
    def asc(self) -> Expression:
        """``order_by(col('a').asc)``: ascending (NULLs first, Flink's default)."""
        return Expression(exp.Ordered(this=to_sql_expression(self), desc=False))

    @property
    def desc(self) -> Expression:
        """``order_by(col('a').desc)``: descending (NULLs last, Flink's default)."""
        return Expression(exp.Ordered(this=to_sql_expression(self), desc=True))

    def over(self, alias: Any) -> Expression:
        """``col('x').max.over(col('w'))``: this aggregate over the OVER window ``w`` of ``table.over_window``."""
        window = to_sql_expression(alias)
        return Expression(exp.Window(this=to_sql_expression(self), alias=exp.to_identifier(window.name)))

    def _interval(self, unit: str) -> Expression:
        value = self._node
        text = value.name if isinstance(value, exp.Literal) else value.sql()
        return Expression(exp.Interval(this=exp.Literal.string(text), unit=exp.Var(this=unit)))

    @property
    def milli(self) -> Expression:
        return self._interval("MILLISECOND")

    millis = milli

    @property
    def second(self) -> Expression:
        return self._interval("SECOND")

    seconds = second

    @property
    def minute(self) -> Expression:
        return self._interval("MINUTE")

    minutes = minute

    @property
    def hour(self) -> Expression:
        return self._interval("HOUR")

    hours = hour

    @property
    def day(self) -> Expression:
        return self._interval("DAY")

    days = day

    def cast(self, data_type: Any) -> Expression:
        return Expression(exp.Cast(this=to_sql_expression(self), to=FlinkType(this=str(data_type))))

    def try_cast(self, data_type: Any) -> Expression:
        return Expression(exp.Cast(this=to_sql_expression(self), to=FlinkType(this=str(data_type)), safe=True))

    @property
    def is_null(self) -> Expression:
        return Expression(exp.Is(this=to_sql_expression(self), expression=exp.Null()))

    @property
    def is_not_null(self) -> Expression:
        return Expression(exp.Not(this=exp.Is(this=to_sql_expression(self), expression=exp.Null())))

    def in_(self, *values: Any) -> Expression:
        return Expression(exp.In(this=to_sql_expression(self), expressions=[to_sql_expression(v) for v in values]))

    def between(self, lower: Any, upper: Any) -> Expression:
        return Expression(
            exp.Between(this=to_sql_expression(self), low=to_sql_expression(lower), high=to_sql_expression(upper))
        )

    def like(self, pattern: Any) -> Expression:
        return _binary(exp.Like, self, pattern)

    # -- aggregates (properties, as PyFlink's) -------------------------------------------------------
    @property
    def count(self) -> Expression:
        return Expression(exp.Count(this=to_sql_expression(self)))

    @property
    def sum(self) -> Expression:
        return Expression(exp.Sum(this=to_sql_expression(self)))

    @property
    def avg(self) -> Expression:
        return Expression(exp.Avg(this=to_sql_expression(self)))

    @property
    def min(self) -> Expression:
        return Expression(exp.Min(this=to_sql_expression(self)))

    @property
    def max(self) -> Expression:
        return Expression(exp.Max(this=to_sql_expression(self)))

    @property
    def distinct(self) -> Expression:
        return Expression(exp.Distinct(expressions=[to_sql_expression(self)]))

    # -- a few scalar functions as methods (PyFlink's names) -------------------------------------------
    @property
    def upper_case(self) -> Expression:
        return _call("UPPER", self)

    @property
    def lower_case(self) -> Expression:
        return _call("LOWER", self)

    @property
    def char_length(self) -> Expression:
        return _call("CHAR_LENGTH", self)

    @property
    def abs(self) -> Expression:
        return _call("ABS", self)

    def json_value(self, path: str, returning_type: Any = None, *args: Any) -> Expression:
        call = _call("JSON_VALUE", self, path)
        return call.cast(returning_type) if returning_type is not None else call

    def substring(self, begin: Any, length: Any = None) -> Expression:
        return _call("SUBSTRING", self, begin) if length is None else _call("SUBSTRING", self, begin, length)

    def trim(self) -> Expression:
        return _call("TRIM", self)

    def if_null(self, null_replacement: Any) -> Expression:
        return _call("IFNULL", self, null_replacement)
