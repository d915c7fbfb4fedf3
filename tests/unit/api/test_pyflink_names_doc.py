"""docs/pyflink.md's table of PyFlink names says what strom has: a name marked same or different exists under
PyFlink's module paths here (``strom.common``, ``strom.datastream``, ``strom.metrics`` and their modules), a name
marked missing does not, and the counts in the page's introduction are the table's."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path
from types import ModuleType

PAGE = Path(__file__).parents[3] / "docs" / "pyflink.md"
ROW = re.compile(r"^\| `([^`]+)` \| (same|different|missing) \|", re.M)


def _modules() -> list[ModuleType]:
    modules = []
    for base in ("strom.common", "strom.datastream", "strom.metrics"):
        package = importlib.import_module(base)
        modules.append(package)
        modules.extend(importlib.import_module(m.name) for m in pkgutil.walk_packages(package.__path__, base + "."))
    return modules


def _exists(name: str, modules: list[ModuleType]) -> bool:
    head, *attributes = name.split(".")
    for module in modules:
        obj = getattr(module, head, None)
        for attribute in attributes:
            obj = getattr(obj, attribute, None)
        if obj is not None:
            return True
    return False


def test_every_row_of_the_names_table_says_what_strom_has() -> None:
    rows = ROW.findall(PAGE.read_text())
    modules = _modules()
    assert len(rows) > 400
    wrong = [f"{name} ({status})" for name, status in rows if (status == "missing") == _exists(name, modules)]
    assert not wrong, f"docs/pyflink.md says otherwise of: {', '.join(wrong)}"


def test_the_introduction_counts_the_table() -> None:
    text = PAGE.read_text()
    statuses = [status for _, status in ROW.findall(text)]
    claim = re.search(
        r"(\d+) of PyFlink's DataStream names are marked `same` in the table below, (\d+) `missing`", text
    )
    assert claim is not None
    assert (int(claim[1]), int(claim[2])) == (statuses.count("same"), statuses.count("missing"))
