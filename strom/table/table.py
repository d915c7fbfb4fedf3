"""PyFlink's ``Table`` and ``GroupedTable``: relational operations that build on the same planner as SQL.

Each operation is expressed as the SQL query it stands for over the input table (a ``SELECT … FROM $input``
built from sqlglot trees, never from strings), so the Table API and SQL share validation, typing and plans.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from strom.table.errors import TableException, ValidationException
from strom.table.expression import to_sql_expression
from strom.table.planner.logical import RelNode, explain
from strom.table.sql.flink_dialect import FlinkDialect
from strom.table.sql.parser import parse_expression, parse_statement

if TYPE_CHECKING:
    from strom.table.table_environment import TableEnvironment
    from strom.table.table_result import TableResult

__all__ = ["GroupedTable", "Table"]

_INPUT = "$input"
_RIGHT = "$right"


def _source(name: str = _INPUT) -> exp.Table:
    return exp.Table(this=exp.to_identifier(name, quoted=True))


def _item(field: Any) -> exp.Expr:
    if isinstance(field, str):
        return parse_expression(field)
    node = to_sql_expression(field)
    return exp.Star() if isinstance(node, exp.Column) and node.name == "*" and not node.table else node  # col('*')


def _named(fields: tuple[Any, ...]) -> list[exp.Expr]:
    """The Table API's names: an unnamed expression at position i is ``_c<i>`` (SQL's would be ``EXPR$<i>``)."""
    items = []
    for i, field in enumerate(fields):
        node = _item(field)
        if not isinstance(node, exp.Alias | exp.Column | exp.Star):
            node = exp.alias_(node, f"_c{i}", quoted=True)
        items.append(node)
    return items


def _aggregates_named(fields: tuple[Any, ...]) -> list[exp.Expr]:
    """A grouped select's names: an unnamed aggregate call is ``EXPR$<j>`` (the j-th such aggregate, Calcite's name
    as Flink's Table API shows it), any other unnamed expression ``_c<i>``."""
    from strom.table.planner.aggregate_converter import is_aggregate_call

    items: list[Any] = []
    unnamed = 0
    for field in fields:
        node = _item(field)
        if not isinstance(node, exp.Alias | exp.Column | exp.Star) and is_aggregate_call(node):
            node = exp.alias_(node, f"EXPR${unnamed}", quoted=True)
            unnamed += 1
        items.append(node)
    return _named(tuple(items))


def _ordered(field: Any) -> exp.Ordered:
    node = _item(field)
    return node if isinstance(node, exp.Ordered) else exp.Ordered(this=node, desc=False)


def _nulls_placed(key: exp.Ordered) -> list[exp.Ordered]:
    """A Table API sort key as SQL ones: Calcite's ``RelBuilder`` puts NULLs last ascending and first descending (the
    Table API's order, unlike SQL's), so ``(k IS NULL)`` in the key's direction comes first."""
    desc = bool(key.args.get("desc"))
    is_null = exp.Is(this=key.this.copy(), expression=exp.Null())
    sql_default = not desc  # SQL's NULLS FIRST ascending / LAST descending, spelt out for the sort's rules
    return [
        exp.Ordered(this=is_null, desc=desc, nulls_first=sql_default),
        exp.Ordered(this=key.this.copy(), desc=desc, nulls_first=sql_default),
    ]


class _Sort:
    """``order_by`` over ``table``: the sort keys, and the offset and fetch ``offset``/``fetch`` add to it."""

    def __init__(self, table: Table, keys: tuple[exp.Ordered, ...], offset: int = 0, fetch: int | None = None):
        self.table = table
        self.keys = keys
        self.offset = offset
        self.fetch = fetch

    def sorted(self, offset: int, fetch: int | None) -> Table:
        """``SELECT * FROM table ORDER BY keys [LIMIT fetch] [OFFSET offset]``, planned by the SQL sort rules."""
        select = exp.Select(expressions=[exp.Star()]).from_(_source())
        select.set("order", exp.Order(expressions=[o for k in self.keys for o in _nulls_placed(k)]))
        if fetch is not None:
            select = select.limit(fetch)
        if offset:
            select = select.offset(offset)
        t_env = self.table._t_env
        if offset and fetch is None and not t_env._streaming():  # Flink's batch SortLimit needs an end
            out = Table(t_env, self.table._plan, TableException("Not support limitEnd is max value now!"))
            out._sort = _Sort(self.table, self.keys, offset, fetch)
            return out
        try:
            out = self.table._query(select)
        except TableException as err:  # STREAMING: Flink plans the sort lazily, so a fetch may still follow
            if fetch is not None or not t_env._streaming():
                raise
            out = Table(t_env, self.table._plan, err)
        out._sort = _Sort(self.table, self.keys, offset, fetch)
        return out


class Table:
    """A (dynamic) table: a logical plan in one ``TableEnvironment``."""

    def __init__(self, t_env: TableEnvironment, plan: RelNode, deferred: TableException | None = None) -> None:
        self._t_env = t_env
        self._rel = plan
        self._deferred = deferred  # a streaming order_by Flink refuses only when planned (unless fetch follows)
        self._name: str | None = None
        self._sort: _Sort | None = None  # set on the table order_by returns: offset/fetch re-plan the sort

    @property
    def _plan(self) -> RelNode:
        if self._deferred is not None:
            raise self._deferred
        return self._rel

    # -- derivation --------------------------------------------------------------------------------
    def _query(self, select: exp.Query, **others: Table) -> Table:
        ctes = {_INPUT: self._plan, **{name: t._plan for name, t in others.items()}}
        plan = self._t_env._sql_to_rel().convert_query(select, ctes)
        return Table(self._t_env, plan)

    def _columns(self) -> list[exp.Expr]:
        return [exp.column(n, quoted=True) for n in self._plan.row_type.names]

    def select(self, *fields: Any) -> Table:
        return self._query(exp.Select(expressions=_named(fields)).from_(_source()))

    def where(self, predicate: Any) -> Table:
        return self._query(exp.Select(expressions=[exp.Star()]).from_(_source()).where(_item(predicate)))

    filter = where

    def group_by(self, *fields: Any) -> GroupedTable:
        return GroupedTable(self, [_item(f) for f in fields])

    def window(self, window: Any) -> GroupWindowedTable:
        """A group window (``pyflink.table.window``): ``window(Tumble.over(...).on(...).alias('w'))``."""
        return GroupWindowedTable(self, window)

    def over_window(self, *over_windows: Any) -> OverWindowedTable:
        """OVER windows (``pyflink.table.window.Over``): ``select(agg.over(col('w')), …)`` next."""
        return OverWindowedTable(self, over_windows)

    def distinct(self) -> Table:
        return self._query(exp.Select(expressions=[exp.Star()], distinct=exp.Distinct()).from_(_source()))

    def add_columns(self, *fields: Any) -> Table:
        return self._query(exp.Select(expressions=[*self._columns(), *(_item(f) for f in fields)]).from_(_source()))

    def add_or_replace_columns(self, *fields: Any) -> Table:
        items = [_item(f) for f in fields]
        replaced = {i.alias_or_name: i for i in items}
        columns: list[exp.Expr] = []
        for name in self._plan.row_type.names:
            columns.append(replaced.pop(name) if name in replaced else exp.column(name, quoted=True))
        return self._query(exp.Select(expressions=[*columns, *replaced.values()]).from_(_source()))

    def rename_columns(self, *fields: Any) -> Table:
        renames: dict[str, str] = {}
        for f in fields:
            node = _item(f)
            if not isinstance(node, exp.Alias) or not isinstance(node.this, exp.Column):
                raise ValidationException(
                    f"rename_columns expects col('old').alias('new'); got {node.sql(dialect=FlinkDialect)}"
                )
            renames[node.this.name] = node.alias
        unknown = set(renames) - set(self._plan.row_type.names)
        if unknown:
            raise ValidationException(
                f"rename_columns: Field {sorted(unknown)} does not exist; "
                f"expected one of {list(self._plan.row_type.names)}"
            )
        items = [
            exp.alias_(exp.column(n, quoted=True), renames[n], quoted=True)
            if n in renames
            else exp.column(n, quoted=True)
            for n in self._plan.row_type.names
        ]
        return self._query(exp.Select(expressions=items).from_(_source()))

    def drop_columns(self, *fields: Any) -> Table:
        dropped = {_item(f).name for f in fields}
        unknown = dropped - set(self._plan.row_type.names)
        if unknown:
            raise ValidationException(
                f"drop_columns: Field {sorted(unknown)} does not exist; "
                f"expected one of {list(self._plan.row_type.names)}"
            )
        items = [exp.column(n, quoted=True) for n in self._plan.row_type.names if n not in dropped]
        return self._query(exp.Select(expressions=items).from_(_source()))

    def alias(self, field: str, *fields: str) -> Table:
        names = [field, *fields]
        if len(names) > len(self._plan.row_type):
            raise ValidationException(f"alias: expected at most {len(self._plan.row_type)} names; got {len(names)}")
        items = [
            exp.alias_(exp.column(old, quoted=True), names[i], quoted=True)
            if i < len(names)
            else exp.column(old, quoted=True)
            for i, old in enumerate(self._plan.row_type.names)
        ]
        return self._query(exp.Select(expressions=items).from_(_source()))

    def flat_map(self, func: Any) -> Table:
        """Apply a ``@udtf`` to each row (PyFlink's ``Table.flat_map``): columns ``f0``, ``f1``, …"""
        from strom.table.planner.logical import Correlate, RowType
        from strom.table.udf import UserDefinedFunctionWrapper

        if not isinstance(func, UserDefinedFunctionWrapper) or not func.table_function:
            raise ValidationException(f"flat_map expects a @udtf function; got {type(func).__name__}")
        names = tuple(f"f{i}" for i in range(len(func.result_types)))
        return Table(self._t_env, Correlate(RowType(names, func.result_types), self._plan, func.func))

    def map(self, func: Any) -> Table:
        """Apply a ``@udf`` to each row as a ``Row`` (PyFlink's ``Table.map``): a ROW result gives its fields as
        columns, any other result one column ``f0``."""
        from strom.table.planner.logical import Correlate, RowType
        from strom.table.udf import MappedRow, UserDefinedFunctionWrapper

        if not isinstance(func, UserDefinedFunctionWrapper) or func.table_function or func.aggregate is not None:
            raise ValidationException(f"map expects a @udf function; got {type(func).__name__}")
        result = func.result_type
        names = tuple(getattr(result, "field_names", lambda: [])()) or ("f0",)
        types = tuple(getattr(result, "field_types", lambda: [result])())
        mapped = MappedRow(func.func, self._plan.row_type.names)
        return Table(self._t_env, Correlate(RowType(names, types), self._plan, mapped))

    def join_lateral(self, table_function_call: Any, join_predicate: Any = None) -> Table:
        """Each row joined with the rows a ``@udtf`` yields for it (PyFlink's ``Table.join_lateral``): called on
        columns (``split(col('name'))``) it gets their values, uncalled (``split.alias('a')``) the row as a
        ``Row``; ``.alias`` names its columns."""
        if join_predicate is not None:
            raise ValidationException("join_lateral: expected no join predicate; got one (not supported yet)")
        return self._lateral(table_function_call, outer=False)

    def left_outer_join_lateral(self, table_function_call: Any, join_predicate: Any = None) -> Table:
        """As :meth:`join_lateral`, and a row the function yields no row for is kept with NULLs in the function's
        columns (PyFlink's ``Table.left_outer_join_lateral``); the predicate may only be empty or ``lit(True)``."""
        predicate = _item(join_predicate) if join_predicate is not None else None
        if predicate is not None and not (isinstance(predicate, exp.Boolean) and predicate.this is True):
            raise ValidationException(
                "Predicate for lateral left outer join with table function can only be empty or literal true."
            )
        return self._lateral(table_function_call, outer=True)

    def _lateral(self, table_function_call: Any, *, outer: bool) -> Table:
        from strom.table.planner.logical import Correlate, RowType
        from strom.table.udf import LateralRows, OuterLateralRows, UserDefinedFunctionWrapper, lookup

        call = table_function_call
        node = _item(call() if isinstance(call, UserDefinedFunctionWrapper) else call)
        names: list[str] = []
        if isinstance(node, exp.Alias):
            names = [n for n in node.alias.split(",") if n]
            node = node.this
        function = lookup(str(node.this)) if isinstance(node, exp.Anonymous) else None
        if function is None or not function.table_function:
            raise ValidationException(f"join_lateral expects a @udtf call; got {node.sql()}")
        own = self._plan.row_type.names
        args = [a.name for a in node.expressions]
        unknown = [a.sql() for a in node.expressions if not isinstance(a, exp.Column) or a.name not in own]
        if unknown:
            raise ValidationException(f"join_lateral: expected column arguments of {list(own)}; got {unknown}")
        columns = tuple(own.index(a) for a in args) if args else None
        out_names = names or [f"f{i}" for i in range(len(function.result_types))]
        result_types = tuple(t.nullable() for t in function.result_types) if outer else function.result_types
        row_type = RowType((*own, *out_names), (*self._plan.row_type.types, *result_types))
        lateral = (
            OuterLateralRows(function.func, own, columns, len(function.result_types))
            if outer
            else LateralRows(function.func, own, columns)
        )
        return Table(self._t_env, Correlate(row_type, self._plan, lateral))

    def limit(self, fetch: int, offset: int = 0) -> Table:
        """The first ``fetch`` rows after ``offset`` (PyFlink's ``Table.limit``); after ``order_by`` of the sort."""
        if self._sort is not None:
            return self._sort.sorted(offset or self._sort.offset, fetch)
        select = exp.Select(expressions=[exp.Star()]).from_(_source()).limit(fetch)
        return self._query(select.offset(offset) if offset else select)

    def fetch(self, fetch: int) -> Table:
        """The first ``fetch`` rows (after ``order_by``/``offset``: of the sorted rows)."""
        return self.limit(fetch)

    def order_by(self, *fields: Any) -> Table:
        """The rows sorted by ``fields`` (``col('a').desc``; ascending by default), PyFlink's ``Table.order_by``:
        BATCH a global sort, STREAMING only by an ascending time attribute or with ``fetch`` (a Top-N), as Flink."""
        return _Sort(self, tuple(_ordered(f) for f in fields)).sorted(0, None)

    def offset(self, offset: int) -> Table:
        """The sorted rows after the first ``offset`` (PyFlink's ``Table.offset``, after ``order_by``)."""
        if self._sort is None:
            raise ValidationException("offset: expected a table sorted by order_by(...); got an unsorted table")
        return self._sort.sorted(offset, self._sort.fetch)

    def union_all(self, right: Table) -> Table:
        left_q = exp.Select(expressions=[exp.Star()]).from_(_source())
        right_q = exp.Select(expressions=[exp.Star()]).from_(_source(_RIGHT))
        return self._query(exp.Union(this=left_q, expression=right_q, distinct=False), **{_RIGHT: right})

    def _join(self, right: Table, condition: Any, side: str | None) -> Table:
        clash = set(self._plan.row_type.names) & set(right._plan.row_type.names)
        if clash:
            raise ValidationException(
                f"join: the two tables have fields of the same name {sorted(clash)}; hint: rename them first (alias)"
            )
        join = exp.Join(this=_source(_RIGHT), on=_item(condition) if condition is not None else None)
        if side:
            join.set("side", side)
        select = exp.Select(expressions=[exp.Star()]).from_(_source())
        select.set("joins", [join])
        return self._query(select, **{_RIGHT: right})

    def join(self, right: Table, join_predicate: Any = None) -> Table:
        return self._join(right, join_predicate, None)

    def left_outer_join(self, right: Table, join_predicate: Any = None) -> Table:
        return self._join(right, join_predicate, "LEFT")

    def right_outer_join(self, right: Table, join_predicate: Any) -> Table:
        return self._join(right, join_predicate, "RIGHT")

    def full_outer_join(self, right: Table, join_predicate: Any) -> Table:
        return self._join(right, join_predicate, "FULL")

    # -- execution ---------------------------------------------------------------------------------
    def execute(self) -> TableResult:
        return self._t_env._execute_query(self._plan)

    def execute_insert(self, table_path: str, overwrite: bool = False) -> TableResult:
        from strom.table.planner.insert_overwrite import SinkTarget

        return self._t_env._execute_inserts([(SinkTarget(table_path, overwrite, {}), self._plan)])

    def to_pandas(self) -> Any:
        import pandas as pd  # type: ignore[import-untyped,unused-ignore]

        with_rows = list(self._t_env._execute_query(self._plan, materialized=True).collect())
        return pd.DataFrame([r._values for r in with_rows], columns=list(self._plan.row_type.names))

    # -- schema and explanation ------------------------------------------------------------------------
    def get_schema(self) -> Any:
        return self._rel.row_type

    get_resolved_schema = get_schema

    def print_schema(self) -> None:
        print("(")
        print(
            ",\n".join(f"  `{n}` {t}" for n, t in zip(self._rel.row_type.names, self._rel.row_type.types, strict=True))
        )
        print(")")

    def explain(self, *extra_details: Any) -> str:
        return f"== Optimized Physical Plan ==\n{explain(self._plan)}\n"

    def __str__(self) -> str:
        if self._name is None:
            self._name = self._t_env._register_anonymous(self)
        return self._name

    def __iter__(self) -> Iterator[Any]:
        raise TypeError("a Table is not iterable; hint: table.execute().collect()")

    def __getattr__(self, name: str) -> Any:
        """``table.data``: the column ``data`` as an expression (PyFlink's ``Table.__getattr__``)."""
        names = self.__dict__["_rel"].row_type.names if "_rel" in self.__dict__ else ()
        if name.startswith("__") or name not in names:
            raise AttributeError(
                f"The current table has no column named '{name}', available columns: [{', '.join(names)}]"
            )
        from strom.table.expressions import col

        return col(name)


class GroupedTable:
    """``table.group_by(keys)``: ``select(...)`` with aggregates (PyFlink's ``GroupedTable``)."""

    def __init__(self, table: Table, keys: list[exp.Expr]) -> None:
        self._table = table
        self._keys = keys

    def select(self, *fields: Any) -> Table:
        select = exp.Select(expressions=_aggregates_named(fields)).from_(_source())
        select = select.group_by(*[k.copy() for k in self._keys]) if self._keys else select
        if not self._keys:
            select.set("group", None)
        return self._table._query(select)

    def aggregate(self, func: Any) -> Table:
        """A ``@udaf`` per group whose result is a ROW: the keys then its fields (PyFlink's ``AggregatedTable``;
        ``select`` it next). Called without arguments the function gets each input row as a ``Row``."""
        return self._expanded(func, table_aggregate=False)

    def flat_aggregate(self, func: Any) -> Table:
        """A ``@udtaf`` per group: the keys then the function's rows (PyFlink's ``FlatAggregateTable``); a group's
        update retracts its previous rows and emits the new ones."""
        return self._expanded(func, table_aggregate=True)

    def _expanded(self, func: Any, *, table_aggregate: bool) -> Table:
        from strom.table.planner.logical import Correlate, RowType
        from strom.table.udf import EmittedRows, UserDefinedFunctionWrapper, aggregate_function, row_argument_call

        node = _item(func() if isinstance(func, UserDefinedFunctionWrapper) else func)
        names: list[str] = []
        if isinstance(node, exp.Alias):
            names = [n for n in node.alias.split(",") if n]
            node = node.this
        user = aggregate_function(str(node.this)) if isinstance(node, exp.Anonymous) else None
        if user is None or user.table_aggregate != table_aggregate:
            what = "flat_aggregate expects a @udtaf" if table_aggregate else "aggregate expects a @udaf"
            raise ValidationException(f"{what} call; got {node.sql()}")
        if not node.expressions:  # the whole row is the argument, as PyFlink's row-based operations
            node = row_argument_call(user, list(self._table._plan.row_type.names))
            user = aggregate_function(str(node.this))
            assert user is not None
        result = user.result_type
        field_names = list(getattr(result, "field_names", lambda: [])()) or ["f0"]
        field_types = list(getattr(result, "field_types", lambda: [result])())
        keys = [exp.alias_(k.copy(), f"__k{i}", quoted=True) for i, k in enumerate(self._keys)]
        grouped = GroupedTable(self._table, self._keys).select(*keys, exp.alias_(node, "__rows", quoted=True))
        n_keys = len(self._keys)
        key_names = [k.name if isinstance(k, exp.Column) else f"_c{i}" for i, k in enumerate(self._keys)]
        row_type = RowType(
            (*key_names, *(names or field_names)), (*grouped._plan.row_type.types[:n_keys], *field_types)
        )
        expand = EmittedRows(n_keys, single=not table_aggregate)
        return Table(self._table._t_env, Correlate(row_type, grouped._plan, expand))


class GroupWindowedTable:
    """``table.window(w)``: ``group_by(col('w'), keys...)`` next (PyFlink's ``GroupWindowedTable``)."""

    def __init__(self, table: Table, window: Any) -> None:
        self._table = table
        self._window = window

    def group_by(self, *fields: Any) -> WindowGroupedTable:
        keys = [_item(f) for f in fields]
        alias = self._window.alias_name
        if not any(isinstance(k, exp.Column) and k.name == alias for k in keys):
            raise ValidationException(f"group_by of a window: expected the window alias {alias!r} among the keys")
        return WindowGroupedTable(self._table, self._window, [k for k in keys if k.name != alias])


_WINDOW_COLUMNS = {"__WINDOW_START": "window_start", "__WINDOW_END": "window_end", "__WINDOW_ROWTIME": "window_time"}


class WindowGroupedTable:
    """``table.window(w).group_by(w, keys)``: ``select`` plans a window TVF aggregation (Flink's group window)."""

    def __init__(self, table: Table, window: Any, keys: list[exp.Expr]) -> None:
        self._table = table
        self._window = window
        self._keys = keys

    def select(self, *fields: Any) -> Table:
        if self._window.rows is not None:  # a row-count window: its own operator
            from strom.table.row_count_window import row_count_window_plan

            items = [_item(f) for f in fields]
            return Table(
                self._table._t_env, row_count_window_plan(self._table, self._window, self._keys, fields, items)
            )

        def window_column(node: exp.Expr) -> exp.Expr:
            if isinstance(node, exp.Anonymous) and str(node.this) in _WINDOW_COLUMNS:
                return exp.column(_WINDOW_COLUMNS[str(node.this)], quoted=True)
            return node

        items = []
        unnamed = 0
        for field in fields:
            node = _item(field)
            if isinstance(node, exp.Anonymous) and str(node.this) in _WINDOW_COLUMNS:
                node = exp.alias_(node, f"EXPR${unnamed}", quoted=True)  # Flink's names of unnamed properties
                unnamed += 1
            items.append(node)
        items = [i.transform(window_column) for i in _named(tuple(items))]
        partition_by = ", ".join(k.sql(dialect=FlinkDialect) for k in self._keys)  # a Session's sessions: per key
        source = parse_statement(f"SELECT 1 FROM {self._window.table_function(_INPUT, partition_by)}").args["from_"]
        for call in source.find_all(exp.Anonymous):  # a legacy group window: any size and slide (planner/translator)
            call.meta["group_window"] = True
        select = exp.Select(expressions=items)
        select.set("from_", source)
        window = [exp.column("window_start", quoted=True), exp.column("window_end", quoted=True)]
        if any(c.name == "window_time" for i in items for c in i.find_all(exp.Column)):
            window.append(exp.column("window_time", quoted=True))
        return self._table._query(select.group_by(*window, *[k.copy() for k in self._keys]))


class OverWindowedTable:
    """``table.over_window(w, …)``: ``select`` with ``agg.over(col('w'))`` (PyFlink's ``OverWindowedTable``), planned
    as the SQL OVER aggregation it stands for."""

    def __init__(self, table: Table, windows: tuple[Any, ...]) -> None:
        self._table = table
        self._windows = {w.alias_name: w for w in windows}

    def select(self, *fields: Any) -> Table:
        def over(node: exp.Expr) -> exp.Expr:
            if not isinstance(node, exp.Window) or node.args.get("partition_by") or node.args.get("order"):
                return node
            window = self._windows.get(node.alias.name if isinstance(node.alias, exp.Identifier) else node.alias)
            if window is None:
                raise ValidationException(
                    f"over_window: expected .over(col(w)) of a window in {sorted(self._windows)}; got {node.sql()}"
                )
            return parse_expression(f"{node.this.sql(dialect=FlinkDialect)} OVER {window.over_clause()}")

        items = [i.transform(over) for i in _named(fields)]
        return self._table._query(exp.Select(expressions=items).from_(_source()))
