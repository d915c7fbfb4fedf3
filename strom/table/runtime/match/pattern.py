"""Flink's ``Pattern`` as ``MATCH_RECOGNIZE``'s ``PATTERN (…)`` writes it: a concatenation of pattern variables,
each with a quantifier (``*``, ``+``, ``?``, ``{n}``, ``{n,}``, ``{n,m}`` with n > 0 as Flink; a trailing ``?``
makes it reluctant). :func:`parse_pattern` reads the text and refuses what Flink refuses (a greedy quantifier last, a
reluctant optional) and what strom does not plan yet (alternation ``|``, groups, ``PERMUTE``, anchors)."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["PatternElement", "PatternError", "parse_pattern"]

_TOKEN = re.compile(
    r"\s*(?:(?P<var>`[^`]+`|[A-Za-z_][A-Za-z0-9_]*)|(?P<quant>\*|\+|\?|\{\s*\d*\s*(?:,\s*\d*\s*)?\})(?P<lazy>\?)?"
    r"|(?P<other>\S))"
)


class PatternError(ValueError):
    """A pattern strom cannot run (the message says what is supported)."""


@dataclass(frozen=True, slots=True)
class PatternElement:
    """One pattern variable with its quantifier: ``min``..``max`` rows (``max`` None: unbounded)."""

    name: str
    min: int = 1
    max: int | None = 1
    greedy: bool = True

    @property
    def quantified(self) -> bool:
        """Whether the number of rows varies."""
        return self.max != self.min

    @property
    def keeps_rows(self) -> bool:
        """A greedy loop or range (``+ * {n,} {n,m}``, not ``?``): the next variable may only take a row this one
        rejects (Flink's ``updateWithGreedyCondition``; a greedy optional ``B?`` adds no such condition)."""
        return self.greedy and self.quantified and (self.min, self.max) != (0, 1)

    def __str__(self) -> str:
        if (self.min, self.max) == (1, 1):
            return self.name
        upper = "" if self.max is None else str(self.max)
        return f"{self.name}{{{self.min},{upper}}}{'' if self.greedy else '?'}"


def _quantifier(text: str) -> tuple[int, int | None]:
    if text == "*":
        return 0, None
    if text == "+":
        return 1, None
    if text == "?":
        return 0, 1
    inner = text[1:-1].replace(" ", "")
    if "," not in inner:
        return int(inner), int(inner)
    low, high = inner.split(",")
    return int(low or 0), (int(high) if high else None)


def parse_pattern(text: str) -> tuple[PatternElement, ...]:
    """The elements of ``PATTERN (text)``."""
    elements: list[PatternElement] = []
    position = 0
    text = text.strip()
    while position < len(text):
        found = _TOKEN.match(text, position)
        if found is None or found.end() == position:
            break
        position = found.end()
        if found.group("var"):
            elements.append(PatternElement(found.group("var").strip("`")))
        elif found.group("quant"):
            if not elements or (elements[-1].min, elements[-1].max) != (1, 1) or not elements[-1].greedy:
                raise PatternError(f"expected a pattern variable before the quantifier '{found.group('quant')}'")
            low, high = _quantifier(found.group("quant"))
            if found.group("quant").startswith("{") and low == 0:
                raise PatternError("The from should be a positive number greater than 0.")  # Flink's times(0, m)
            if high is not None and (high < low or high == 0):
                raise PatternError(f"expected a quantifier {{n,m}} with 0 < m and n <= m; got {found.group('quant')}")
            elements[-1] = PatternElement(elements[-1].name, low, high, found.group("lazy") is None)
        else:
            raise PatternError(
                f"expected pattern variables with quantifiers (* + ? {{n}} {{n,}} {{n,m}}, reluctant with ?); got "
                f"'{found.group('other')}' (alternation, groups, PERMUTE and anchors are not supported)"
            )
    if not elements:
        raise PatternError("expected at least one pattern variable in PATTERN (...)")
    _check_flinks_restrictions(elements)
    return tuple(elements)


def _check_flinks_restrictions(elements: list[PatternElement]) -> None:
    for element in elements:
        if element.min == 0 and element.max == 1 and not element.greedy:
            raise PatternError("Reluctant optional variables are not supported yet.")
    last = elements[-1]
    if last.greedy and last.quantified:
        raise PatternError(
            "Greedy quantifiers are not allowed as the last element of a Pattern yet. Finish your pattern with "
            "either a simple variable or reluctant quantifier."
        )
    if all(e.min == 0 for e in elements):
        raise PatternError("expected a pattern that matches at least one row; got only optional variables")
