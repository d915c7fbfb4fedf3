"""The examples in the docstrings of the pure window modules run."""

from __future__ import annotations

import doctest
from types import ModuleType

import pytest

from strom.table.runtime.window import session_window, slice_assigners, time_window_util


@pytest.mark.parametrize("module", [slice_assigners, time_window_util, session_window], ids=lambda m: m.__name__)
def test_docstring_examples(module: ModuleType) -> None:
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
