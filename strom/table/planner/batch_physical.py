"""Flink's batch physical planning (``BatchPhysicalHashAggregate`` local/global, ``BatchPhysicalHashJoin``,
``BatchPhysicalCalc`` over a columnar scan) for BATCH queries over Parquet tables, on Arrow record batches.

:func:`translate_batch` takes an insert-only subtree whose leaves are ``filesystem`` tables of format ``parquet``
(no partition columns, column types :func:`~strom.table.runtime.batch.columnar_calc.columnar_type`), whose Calcs
are :func:`~strom.table.runtime.batch.columnar_calc.columnar`, whose joins are INNER/LEFT/RIGHT/FULL equi-joins
without a residual condition on keys of one type, and whose aggregates are ``COUNT``/``SUM``/``MIN``/``MAX``/
``AVG`` without DISTINCT or FILTER; the rest of the plan stays on the row operators (Arrow batches become rows at
the boundary). A join broadcasts its build side when the side's estimated size (row counts from the Parquet
footers) is at most Flink's ``table.optimizer.join.broadcast-threshold`` (1 MB), and otherwise hash-partitions
both sides by the keys; an aggregate aggregates locally per subtask and merges globally after a hash exchange by
the group keys (at one subtask without GROUP BY, as Flink's singleton exchange).
"""

from __future__ import annotations

import glob
import os
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from strom.table.connectors.parquet_format import arrow_schema
from strom.table.planner.logical import Aggregate, Calc, Join, RelNode, TableScan
from strom.table.planner.rex import input_refs
from strom.table.runtime.batch.columnar_calc import ColumnarCalc, columnar, columnar_type
from strom.table.runtime.batch.hash_aggregate import AggSpec, GlobalHashAggregateOperator, LocalHashAggregateOperator
from strom.table.runtime.batch.hash_exchange import ChannelOf, SubtaskPartitioner, hash_slices

if TYPE_CHECKING:
    from strom.api.datastream import DataStream
    from strom.table.planner.translator import Translator

__all__ = ["BROADCAST_THRESHOLD", "arrow_subtree", "translate_batch"]

#: Flink's ``table.optimizer.join.broadcast-threshold``: a join side this small (bytes) is broadcast
BROADCAST_THRESHOLD = 1 << 20
_AGGREGATES = {"COUNT", "SUM", "MIN", "MAX", "AVG"}
_JOIN_KEYS = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "CHAR", "VARCHAR", "DATE")
_JOIN_KINDS = ("INNER", "LEFT", "RIGHT", "FULL")


def _parquet_scan(rel: TableScan) -> bool:
    from strom.table.connectors.filesystem import FileSystemTableSource

    source = rel.source
    if not isinstance(source, FileSystemTableSource) or source.fmt != "parquet" or not source.bounded:
        return False
    layout = source.layout
    return (
        not layout.partition_names
        and [n.lower() for n in layout.file_names] == [n.lower() for n in rel.row_type.names]
        and all(columnar_type(t) for t in rel.row_type.types)
    )


def _join_ok(rel: Join) -> bool:
    if rel.kind not in _JOIN_KINDS or rel.condition is not None or rel.null_safe or not rel.left_keys:
        return False
    for lk, rk in zip(rel.left_keys, rel.right_keys, strict=True):
        lt, rt = rel.left.row_type.types[lk], rel.right.row_type.types[rk]
        if lt.type_root.name not in _JOIN_KEYS or lt.type_root.name != rt.type_root.name:
            return False
    return True


def arrow_subtree(rel: RelNode) -> bool:
    """Whether ``rel`` can run on Arrow batches end to end (a Parquet scan, columnar Calcs, hash joins)."""
    if isinstance(rel, TableScan):
        return _parquet_scan(rel)
    if isinstance(rel, Calc):
        nodes = [*(rel.projection or ()), *([rel.condition] if rel.condition is not None else [])]
        return all(columnar(n) for n in nodes) and arrow_subtree(rel.input)
    if isinstance(rel, Join):
        return _join_ok(rel) and arrow_subtree(rel.left) and arrow_subtree(rel.right)
    return False


def _aggregate_ok(rel: Aggregate) -> bool:
    types = rel.input.row_type.types
    for call in rel.calls:
        if call.name.upper() not in _AGGREGATES or call.distinct or call.filter_arg is not None or len(call.args) > 1:
            return False
        if call.args and not columnar_type(types[call.args[0]]):
            return False
        numeric = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "DOUBLE") + (
            ("DECIMAL",) if call.name.upper() != "AVG" else ()
        )
        if call.name.upper() in ("SUM", "AVG") and types[call.args[0]].type_root.name not in numeric:
            return False
    return True


def _contains_join(rel: RelNode) -> bool:
    return isinstance(rel, Join) or any(_contains_join(i) for i in rel.inputs)


def translate_batch(translator: Translator, rel: RelNode) -> DataStream[Any] | None:
    """The rows of ``rel`` computed by the Arrow batch operators; ``None``: ``rel`` stays on the row path."""
    if isinstance(rel, Aggregate) and _aggregate_ok(rel) and arrow_subtree(rel.input):
        return _hash_aggregate(translator, rel)
    if isinstance(rel, Join | Calc) and _contains_join(rel) and arrow_subtree(rel):
        return _arrow(translator, rel).flat_map(ArrowToRows()).name("ArrowToRows")
    return None


class ArrowToRows:
    """The boundary to the row operators: an Arrow batch as rows (``Row`` s of the SQL types' Python values)."""

    def __call__(self, batch: pa.RecordBatch) -> list[Any]:
        from strom.api.row import _create_row

        columns = [c.to_pylist() for c in batch.columns]
        return [_create_row(None, list(values)) for values in zip(*columns, strict=True)]


class HashSlices:
    """The producer side of a hash exchange: each batch as ``(subtask, slice)`` s by its key columns."""

    def __init__(self, keys: tuple[int, ...], consumers: int) -> None:
        self.keys = keys
        self.consumers = consumers

    def __call__(self, batch: pa.RecordBatch) -> list[Any]:
        return hash_slices(batch, [batch.schema.names[k] for k in self.keys], self.consumers)


def _schema(rel: RelNode) -> pa.Schema:
    row_type = rel.row_type
    return arrow_schema([f"f{i}" for i in range(len(row_type))], row_type.types)


def _arrow(translator: Translator, rel: RelNode, needed: set[int] | None = None) -> DataStream[Any]:
    """The stream of Arrow batches of an :func:`arrow_subtree`; ``needed``: the columns its consumer reads (the
    scans read only what reaches a consumer, the rest is NULL; ``None``: all)."""
    if isinstance(rel, TableScan):
        return _scan(translator, rel, needed)
    if isinstance(rel, Calc):
        name = f"Calc(select=[{', '.join(rel.row_type.names)}])"
        condition = input_refs([rel.condition]) if rel.condition is not None else set()
        if rel.projection is None:
            reads = None if needed is None else needed | condition
        else:
            used = rel.projection if needed is None else [rel.projection[i] for i in sorted(needed)]
            reads = input_refs(list(used)) | condition
        upstream = _arrow(translator, rel.input, reads)
        return upstream.map(ColumnarCalc(rel.projection, rel.condition)).name(name)
    assert isinstance(rel, Join)
    return _hash_join(translator, rel, needed)


def _scan(translator: Translator, rel: TableScan, needed: set[int] | None) -> DataStream[Any]:
    from strom.api.eventtime import WatermarkStrategy
    from strom.connectors.file_system.source import FileSource
    from strom.table.runtime.batch.arrow_scan import ArrowParquetFormat

    source = rel.source
    read = tuple(needed is None or i in needed for i in range(len(rel.row_type)))
    fmt = ArrowParquetFormat(source._bulk_format(rel.row_type), tuple(source.layout.file_names), _schema(rel), read)
    built = FileSource.for_bulk_file_format(fmt, source.path).build()
    name = f"TableSourceScan(table=[[{rel.table_name}]], fields=[{', '.join(rel.row_type.names)}], format=[arrow])"
    return translator.env.from_source(built, WatermarkStrategy.no_watermarks(), name)


def estimated_bytes(rel: RelNode) -> int | None:
    """A side's size as Flink's statistics would give it: the Parquet footers' row count times the row's width
    (8 bytes a number, 16 a string); ``None``: unknown."""
    scan = rel
    while isinstance(scan, Calc):
        scan = scan.input
    if not isinstance(scan, TableScan):
        return None
    path = str(scan.source.path)
    path = path[len("file://") :] if path.startswith("file://") else path
    if "://" in path:
        return None
    files = [path] if os.path.isfile(path) else glob.glob(os.path.join(path, "**", "*"), recursive=True)
    import pyarrow.parquet as pq

    rows = 0
    for f in files:
        if os.path.isfile(f) and not os.path.basename(f).startswith((".", "_")):
            rows += pq.ParquetFile(f).metadata.num_rows
    width = sum(16 if t.type_root.name in ("CHAR", "VARCHAR") else 8 for t in rel.row_type.types)
    return rows * width


def _build_side(rel: Join) -> tuple[str, bool]:
    """The build side (``left``/``right``) and whether it is broadcast, as Flink's ``BatchPhysicalHashJoinRule``
    picks them: broadcast a small side the join type lets go unmatched-free; else build the smaller side."""
    left, right = estimated_bytes(rel.left), estimated_bytes(rel.right)
    if rel.kind in ("INNER", "LEFT") and right is not None and right <= BROADCAST_THRESHOLD:
        return "right", True
    if rel.kind in ("INNER", "RIGHT") and left is not None and left <= BROADCAST_THRESHOLD:
        return "left", True
    return ("left" if left is not None and right is not None and left < right else "right"), False


def _hash_join(translator: Translator, rel: Join, needed: set[int] | None) -> DataStream[Any]:
    from strom.table.runtime.batch.hash_join import HashJoinOperator

    parallelism = translator.env.get_parallelism()
    build, broadcast = _build_side(rel)
    width = len(rel.left.row_type)
    left_needed = None if needed is None else {i for i in needed if i < width} | set(rel.left_keys)
    right_needed = None if needed is None else {i - width for i in needed if i >= width} | set(rel.right_keys)
    left, right = _arrow(translator, rel.left, left_needed), _arrow(translator, rel.right, right_needed)
    if broadcast:
        left, right = (left.broadcast(), right) if build == "left" else (left, right.broadcast())
    else:
        left = _exchange(left, rel.left_keys, parallelism)
        right = _exchange(right, rel.right_keys, parallelism)
    operator = HashJoinOperator(rel.kind, rel.left_keys, rel.right_keys, (_schema(rel.left), _schema(rel.right)), build)
    names = rel.left.row_type.names, rel.right.row_type.names
    on = ", ".join(f"{names[0][a]}={names[1][b]}" for a, b in zip(rel.left_keys, rel.right_keys, strict=True))
    name = f"HashJoin(joinType=[{rel.kind}], where=[{on}], build=[{build}]{', broadcast=[true]' if broadcast else ''})"
    joined: DataStream[Any] = left._two_input(name, right.get_transformation(), operator, None, name)
    return joined.set_parallelism(parallelism)


def _exchange(stream: DataStream[Any], keys: tuple[int, ...], consumers: int) -> DataStream[Any]:
    sliced = stream.flat_map(HashSlices(keys, consumers)).name(f"Exchange(distribution=[hash{list(keys)}])")
    return sliced.partition_custom(SubtaskPartitioner(), ChannelOf())


def _agg_spec(rel: Aggregate) -> AggSpec:
    from strom.table.connectors.parquet_format import arrow_type

    calls: list[tuple[str, str | None]] = []
    for call in rel.calls:
        name = call.name.upper()
        calls.append(("COUNT_STAR", None) if name == "COUNT" and not call.args else (name, f"f{call.args[0]}"))
    keys = tuple(f"f{k}" for k in rel.group_keys)
    return AggSpec(keys, tuple(calls), tuple(arrow_type(c.result_type) for c in rel.calls))


def _hash_aggregate(translator: Translator, rel: Aggregate) -> DataStream[Any]:
    spec = _agg_spec(rel)
    parallelism = translator.env.get_parallelism() if rel.group_keys else 1
    names = rel.input.row_type.names
    group = f"groupBy=[{', '.join(names[k] for k in rel.group_keys)}], " if rel.group_keys else ""
    select = f"select=[{', '.join(rel.row_type.names)}]"
    reads = set(rel.group_keys) | {a for call in rel.calls for a in call.args}
    upstream = _arrow(translator, rel.input, reads)
    local = upstream._one_input(f"LocalHashAggregate({group}{select})", LocalHashAggregateOperator(spec, parallelism))
    exchanged = local.partition_custom(SubtaskPartitioner(), ChannelOf())
    final = exchanged._one_input(f"HashAggregate(isMerge=[true], {group}{select})", GlobalHashAggregateOperator(spec))
    return final.set_parallelism(parallelism)
