from __future__ import annotations

from pathlib import Path

import pytest

from strom.config import REGISTRY, Configuration, TaskManagerOptions, render_reference
from strom.exceptions import ConfigurationError


def test_values_are_parsed_to_the_option_type() -> None:
    conf = Configuration({"taskmanager.numberOfTaskSlots": "3", "pipeline.operator-chaining.enabled": "false"})
    assert conf.get(TaskManagerOptions.NUM_TASK_SLOTS) == 3
    assert conf.to_dict()["pipeline.operator-chaining.enabled"] is False


def test_unknown_key_suggests_the_known_one() -> None:
    with pytest.raises(ConfigurationError, match=r"known configuration key.*numberOfTaskSlots.*did you mean"):
        Configuration({"taskmanager.numberOfTaskSlots ".strip().replace("taskmanager", "tm"): 2})


def test_wrong_type_is_a_clear_error() -> None:
    with pytest.raises(ConfigurationError, match=r"expects a int; got 'many'"):
        Configuration().set_string("taskmanager.numberOfTaskSlots", "many")


def test_configuration_reference_is_up_to_date() -> None:
    doc = Path(__file__).parents[2] / "docs" / "configuration.md"
    assert doc.read_text() == render_reference(), "run: make docs/configuration.md"
    assert all(f"`{key}`" in doc.read_text() for key in REGISTRY)
