"""Keyed state descriptors and state interfaces (Flink's ``ValueStateDescriptor`` and friends).

class Count(KeyedProcessFunction):
    def open(self, ctx):
        self.count = ctx.get_state(ValueStateDescriptor("count"))
    def process_element(self, value, ctx):
        n = (self.count.value() or 0) + 1
        self.count.update(n)
        yield ctx.get_current_key(), n
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["StateDescriptor", "ValueState", "ValueStateDescriptor"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class StateDescriptor:
    """Names a piece of keyed state; the name is unique per operator."""

    name: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(f"state name must be a non-empty str; got {self.name!r}")


@dataclass(frozen=True, slots=True)
class ValueStateDescriptor(StateDescriptor):
    """A single value per key; ``value()`` is ``None`` until the first ``update``."""


class ValueState(ABC, Generic[T]):
    @abstractmethod
    def value(self) -> T | None: ...

    @abstractmethod
    def update(self, value: T) -> None: ...

    @abstractmethod
    def clear(self) -> None: ...
