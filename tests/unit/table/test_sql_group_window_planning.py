"""The legacy SQL group window functions (``GROUP BY TUMBLE(ts, size)``, ``HOP(ts, slide, size)``,
``SESSION(ts, gap)`` with ``TUMBLE_START`` … in SELECT and HAVING) planned as the window TVF + window aggregation,
and the forms refused with their line:column."""

from __future__ import annotations

import pytest

from strom.table import EnvironmentSettings, TableEnvironment
from strom.table.errors import StromError
from strom.table.planner.logical import RelNode, WindowAggregate

BIDS = (
    "CREATE TABLE bids (`user` STRING, amount INT, ts TIMESTAMP(3), pt TIMESTAMP(3), "
    "WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) "
    "WITH ('connector' = 'filesystem', 'path' = '/nonexistent/bids.csv', 'format' = 'csv')"
)
T10 = "INTERVAL '10' SECOND"


def _env() -> TableEnvironment:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.execute_sql(BIDS)
    return t_env


def _plan(query: str) -> RelNode:
    plan: RelNode = _env().sql_query(query)._plan
    return plan


def _nodes(rel: RelNode) -> list[RelNode]:
    """Every node, a window aggregation's window table function (not one of its inputs) with its input."""
    children = [*rel.inputs, *([rel.window] if isinstance(rel, WindowAggregate) else [])]
    return [rel, *(n for child in children for n in _nodes(child))]


def _window_aggregates(rel: RelNode) -> list[WindowAggregate]:
    return [n for n in _nodes(rel) if isinstance(n, WindowAggregate)]


def test_tumble_plans_as_the_tumble_tvf_and_a_window_aggregation() -> None:
    rel = _plan(f"SELECT `user`, TUMBLE_START(ts, {T10}) AS w, COUNT(*) FROM bids GROUP BY TUMBLE(ts, {T10}), `user`")
    (agg,) = _window_aggregates(rel)
    assert (agg.window.kind, agg.window.params, agg.window.partition_keys) == ("TUMBLE", (10_000, 0), ())
    assert agg.window_properties == ("window_start", "window_end")
    assert rel.row_type.names == ("user", "w", "EXPR$2")
    assert str(rel.row_type.types[1]) == "TIMESTAMP(3) NOT NULL"


def test_hop_takes_slide_then_size_as_the_hop_tvf() -> None:
    hop = "HOP(ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND)"
    rel = _plan(f"SELECT HOP_END(ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND), COUNT(*) FROM bids GROUP BY {hop}")
    (agg,) = _window_aggregates(rel)
    assert (agg.window.kind, agg.window.params) == ("HOP", (5_000, 10_000, 0))
    assert rel.row_type.names == ("EXPR$0", "EXPR$1")


def test_session_is_partitioned_by_the_other_group_keys() -> None:
    rel = _plan(f"SELECT `user`, SESSION_START(ts, {T10}), SUM(amount) FROM bids GROUP BY `user`, SESSION(ts, {T10})")
    (agg,) = _window_aggregates(rel)
    assert (agg.window.kind, agg.window.params, agg.window.partition_keys) == ("SESSION", (10_000,), (0,))


def test_rowtime_is_a_rowtime_attribute_a_following_window_groups_by() -> None:
    inner = (
        f"SELECT `user`, TUMBLE_ROWTIME(ts, {T10}) AS rt, COUNT(*) AS cnt FROM bids GROUP BY TUMBLE(ts, {T10}), `user`"
    )
    rel = _plan(inner)
    assert str(rel.row_type.types[1]) == "TIMESTAMP(3) NOT NULL *ROWTIME*"
    outer = _plan(
        f"SELECT TUMBLE_START(rt, INTERVAL '20' SECOND), SUM(cnt) FROM ({inner}) "
        "GROUP BY TUMBLE(rt, INTERVAL '20' SECOND)"
    )
    outer_agg, *inner_aggs = _window_aggregates(outer)
    assert outer_agg.window.params == (20_000, 0)
    assert outer_agg.window.input.row_type.names[outer_agg.window.rowtime_index] == "rt"
    assert {a.window.params for a in inner_aggs} == {(10_000, 0)}


def test_window_not_in_select_and_having_on_window_start() -> None:
    rel = _plan(
        f"SELECT `user`, COUNT(*) FROM bids GROUP BY TUMBLE(ts, {T10}), `user` "
        f"HAVING TUMBLE_START(ts, {T10}) > TIMESTAMP '2024-01-01 00:00:05'"
    )
    assert len(_window_aggregates(rel)) == 1
    assert rel.row_type.names == ("user", "EXPR$1")


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (
            f"SELECT COUNT(*) FROM bids GROUP BY TUMBLE(pt, {T10})",
            r"line 1, column 43.*expected an event-time attribute.*WATERMARK FOR pt",
        ),
        (
            f"SELECT TUMBLE_START(ts, {T10}) FROM bids GROUP BY `user`",
            r"line 1, column 8.*must have matching call to group function 'TUMBLE'",
        ),
        (
            f"SELECT TUMBLE_START(ts, INTERVAL '20' SECOND) FROM bids GROUP BY TUMBLE(ts, {T10})",
            r"line 1, column 8.*must have matching call.*got GROUP BY TUMBLE\(ts, INTERVAL '10' SECOND\)",
        ),
        (
            f"SELECT TUMBLE_PROCTIME(ts, {T10}) FROM bids GROUP BY TUMBLE(ts, {T10})",
            r"line 1, column 8.*TUMBLE_PROCTIME",
        ),
        (
            f"SELECT COUNT(*) FROM bids GROUP BY TUMBLE(ts, {T10}, TIME '00:00:03')",
            r"line 1, column 36.*no alignment offset",
        ),
        (
            f"SELECT COUNT(*) FROM bids GROUP BY SESSION(ts, {T10}), UPPER(`user`)",
            r"line 1, column 70.*grouped by an expression",
        ),
        (f"SELECT COUNT(*) FROM bids GROUP BY TUMBLE(ts, {T10}), HOP(ts, {T10}, {T10})", r"second group window"),
    ],
)
def test_unsupported_group_windows_are_refused_with_their_position(query: str, message: str) -> None:
    with pytest.raises(StromError, match=message):
        _plan(query)
