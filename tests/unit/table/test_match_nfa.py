"""The MATCH_RECOGNIZE NFA (``strom.table.runtime.match``) on its own, over the ticks of
``tests/data/flink_sql/temporal/ticks.csv`` (ACME's prices), with conditions as Python functions: every expected
match is the one Flink 2.3 emits for the same pattern (``tests/data/flink_sql/match_*.txt``) — greedy and reluctant
quantifiers, optional and bounded ones, the skip strategies, WITHIN, and matches held back while an earlier partial
match is pending. Then the pattern parser's refusals."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from strom.table.runtime.match.nfa import NFA, AfterMatchSkip, MatchView, NFAState
from strom.table.runtime.match.pattern import PatternElement, PatternError, parse_pattern

ACME = [12, 17, 19, 21, 25, 18, 15, 14, 24, 25, 19]
Conditions = dict[str, Callable[[MatchView], bool]]


def run(pattern: str, conditions: Conditions, skip: AfterMatchSkip | None = None, within: int | None = None) -> Any:
    elements = parse_pattern(pattern)
    names = [e.name for e in elements]
    nfa = NFA(elements, [conditions.get(n) for n in names], within, skip)
    state, buffer = NFAState(), {}
    out = []
    for i, price in enumerate(ACME):
        event = ((i + 1) * 1000, i)
        buffer[event] = price
        for match in nfa.process(state, event, price, buffer.__getitem__):
            out.append(" ".join(f"{names[v]}{buffer[e]}" for v, e in match.events))
    return out


def below(n: int) -> Callable[[MatchView], bool]:
    return lambda view: bool(view.current < n)


def above(n: int) -> Callable[[MatchView], bool]:
    return lambda view: bool(view.current > n)


NEXT = AfterMatchSkip("TO_NEXT_ROW")


def test_greedy_bounded_quantifier_keeps_rows_its_condition_accepts_even_when_full() -> None:
    got = run("A B{2,3} C", {"A": below(20), "B": above(16), "C": below(20)}, NEXT)
    assert got == ["A19 B21 B25 B18 C15"]  # match_exact_range: A17 B19 B21 B25 C18 is no match (18 > 16)


def test_exact_times_and_a_greedy_optional() -> None:
    got = run("A B{2} C? D", {"A": below(20), "B": above(14), "C": below(16), "D": above(0)}, NEXT)
    assert got == ["A12 B17 B19 D21", "A17 B19 B21 D25", "A19 B21 B25 D18", "A14 B24 B25 D19"]


def test_greedy_star_and_reluctant_plus() -> None:
    assert run("A B* C", {"A": below(15), "B": above(14), "C": below(15)}) == ["A12 B17 B19 B21 B25 B18 B15 C14"]
    reluctant = run("A B+? C", {"A": below(20), "B": above(10), "C": above(20)})
    assert reluctant == ["A12 B17 B19 C21", "A18 B15 B14 C24"]
    assert run("A B+ C", {"A": below(20), "B": above(10), "C": above(20)}) == []  # greedy B keeps every row


def test_reluctant_range_takes_the_fewest_rows() -> None:
    got = run("A B{1,2}? C", {"A": below(20), "B": above(14), "C": above(17)}, NEXT)
    assert got == ["A12 B17 C19", "A17 B19 C21", "A19 B21 C25", "A14 B24 C25"]


def test_v_shape_with_last_offsets_and_skip_to_last() -> None:
    def down(view: MatchView) -> bool:
        rows, start = view.rows(1), view.rows(0)[-1]
        return bool(rows[-1] < start) if len(rows) < 2 else bool(rows[-1] < rows[-2])

    def up(view: MatchView) -> bool:
        rows = view.rows(1)
        return len(rows) >= 2 and bool(view.current > rows[-2])

    got = run("START_ROW DOWN+ UP", {"DOWN": down, "UP": up}, AfterMatchSkip("TO_LAST", 2))
    assert got == ["START_ROW25 DOWN18 DOWN15 DOWN14 UP24"]


def test_within_drops_partial_matches_as_old_as_the_interval() -> None:
    got = run("A B* C", {"A": above(20), "B": above(16), "C": below(16)}, NEXT, within=3000)
    assert got == ["A25 B18 C15"]  # A21 … C15 spans exactly 3 s


def test_a_pending_earlier_partial_match_holds_later_matches_back() -> None:
    def b(view: MatchView) -> bool:
        return bool(view.current > view.rows(0)[-1])

    def c(view: MatchView) -> bool:
        rows = view.rows(1)
        return len(rows) >= 2 and bool(view.current < rows[-2])

    assert run("A B+ C", {"B": b, "C": c}) == []  # A12 B… never ends: Flink emits nothing either


def test_skip_to_first_prunes_only_matches_starting_before_that_row() -> None:
    got = run("A B{2} C", {"A": below(30)}, AfterMatchSkip("TO_FIRST", 1))
    assert got[:3] == ["A12 B17 B19 C21", "A17 B19 B21 C25", "A19 B21 B25 C18"]
    with pytest.raises(RuntimeError, match="Could not skip to first element of a match"):
        run("A B", {}, AfterMatchSkip("TO_FIRST", 0))


def test_the_partial_matches_and_buffer_references_survive_pickling() -> None:
    import pickle

    elements = parse_pattern("A B+? C")
    nfa = NFA(elements, [below(20), above(10), above(20)])
    state, buffer = NFAState(), {}
    for i, price in enumerate(ACME[:3]):
        buffer[(i, i)] = price
        assert nfa.process(state, (i, i), price, buffer.__getitem__) == []
    restored = pickle.loads(pickle.dumps(state))
    buffer[(3, 3)] = 21
    (match,) = nfa.process(restored, (3, 3), 21, buffer.__getitem__)
    assert [buffer[e] for _, e in match.events] == [12, 17, 19, 21]


def test_pattern_parser() -> None:
    assert parse_pattern("A B{2,} C*? `D`{3}") == (
        PatternElement("A"),
        PatternElement("B", 2, None),
        PatternElement("C", 0, None, greedy=False),
        PatternElement("D", 3, 3),
    )
    for text, message in (
        ("A B+", "Greedy quantifiers are not allowed as the last element"),
        ("A B?? C", "Reluctant optional variables are not supported yet"),
        ("A | B", "alternation, groups, PERMUTE and anchors are not supported"),
        ("(A B)+ C", "alternation, groups"),
        ("A*?", "at least one row"),
        ("A B{,2} C", "The from should be a positive number greater than 0"),
    ):
        with pytest.raises(PatternError, match=message):
            parse_pattern(text)


def test_a_greedy_optional_lets_the_next_variable_take_the_row() -> None:
    got = run("A B? C", {"A": below(20), "B": above(16), "C": above(16)}, NEXT)
    assert got == ["A12 C17", "A17 C19", "A19 C21", "A14 C24"]  # match_greedy_optional


def test_the_watermark_times_out_partial_matches_and_releases_what_they_held_back() -> None:
    def b(view: MatchView) -> bool:
        return bool(view.current > view.rows(0)[-1])

    def c(view: MatchView) -> bool:
        rows = view.rows(1)
        return len(rows) >= 2 and bool(view.current < rows[-2])

    elements = parse_pattern("A B+ C")
    nfa = NFA(elements, [None, b, c], within=6000)
    state, buffer = NFAState(), {}
    for i, price in enumerate(ACME[:6]):  # A19 B21 B25 C18 completes at 6 s behind A12… and A17…
        buffer[((i + 1) * 1000, i)] = price
        assert nfa.process(state, ((i + 1) * 1000, i), price, buffer.__getitem__) == []
    assert nfa.advance_time(state, 7000) == []  # A12… times out; A17… (2 s) still holds the match back
    (match,) = nfa.advance_time(state, 8000)
    assert [buffer[e] for _, e in match.events] == [19, 21, 25, 18]


def test_the_dialect_parses_match_recognize_with_within_and_prints_it_back() -> None:
    from strom.table.sql.flink_dialect import FlinkDialect
    from strom.table.sql.parser import parse_statement

    sql = (
        "SELECT * FROM t MATCH_RECOGNIZE (PARTITION BY sym ORDER BY ts MEASURES LAST(B.p, 1) AS x "
        "AFTER MATCH SKIP TO LAST B PATTERN (A B+? C{2,3}) WITHIN INTERVAL '1' HOUR DEFINE B AS B.p < 3) AS T"
    )
    match = parse_statement(sql).args["match"]
    assert str(match.args["pattern"].name) == "A B+? C{2,3}" and str(match.args["after"].name) == "TO LAST B"
    printed = parse_statement(sql).sql(dialect=FlinkDialect)
    assert "PATTERN (A B+? C{2,3}) WITHIN INTERVAL '1' HOUR DEFINE B AS B.p < 3" in printed
