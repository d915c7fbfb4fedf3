"""The broadcast state pattern (Flink's ``BroadcastStream`` and ``BroadcastConnectedStream``).

``rules.broadcast(rule_state)`` sends every element of ``rules`` to every parallel instance of the operator
it is connected to and declares the broadcast states (``MapStateDescriptor``) that operator keeps;
``items.connect(broadcast_rules).process(fn)`` runs ``fn`` — a ``BroadcastProcessFunction`` on a non-keyed
``items``, a ``KeyedBroadcastProcessFunction`` on a keyed one:

    rule_state = MapStateDescriptor("rules")
    matches = (
        items.key_by(lambda item: item.color)
        .connect(rules.broadcast(rule_state))
        .process(MatchRules(rule_state))
    )
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, TypeVar

from strom.api.co_functions import BroadcastProcessFunction, KeyedBroadcastProcessFunction
from strom.api.state import MapStateDescriptor
from strom.api.transformations import Transformation
from strom.exceptions import InvalidProgramError
from strom.runtime.operators.co.co_broadcast import CoBroadcastWithKeyedOperator, CoBroadcastWithNonKeyedOperator

if TYPE_CHECKING:
    from strom.api.datastream import DataStream
    from strom.api.environment import StreamExecutionEnvironment

__all__ = ["BroadcastConnectedStream", "BroadcastStream"]

IN1 = TypeVar("IN1")
IN2 = TypeVar("IN2")


class BroadcastStream(Generic[IN2]):
    """A stream whose elements reach every instance of the operator it is connected to, with the broadcast
    states that operator keeps. Not a DataStream: it can only be ``connect``-ed to."""

    def __init__(
        self,
        env: StreamExecutionEnvironment,
        transformation: Transformation,
        descriptors: tuple[MapStateDescriptor, ...],
    ) -> None:
        for d in descriptors:
            if not isinstance(d, MapStateDescriptor):
                raise InvalidProgramError(
                    f"broadcast() expects MapStateDescriptors; got a {type(d).__name__}; "
                    "hint: broadcast(MapStateDescriptor('rules'))"
                )
        names = [d.name for d in descriptors]
        if len(set(names)) != len(names):
            raise InvalidProgramError(f"broadcast() expects distinct state names; got {names}")
        self._env = env
        self._transformation = transformation
        self.descriptors = descriptors

    def get_transformation(self) -> Transformation:
        return self._transformation

    def get_execution_environment(self) -> StreamExecutionEnvironment:
        return self._env


class BroadcastConnectedStream(Generic[IN1, IN2]):
    """A (keyed or non-keyed) stream connected with a :class:`BroadcastStream`; closed by ``process``."""

    def __init__(self, first: DataStream[IN1], broadcast_stream: BroadcastStream[IN2]) -> None:
        self.first = first
        self.broadcast_stream = broadcast_stream

    def process(self, func: Any, output_type: Any = None) -> DataStream[Any]:
        first = self.first
        keyed = first._as_keyed()
        descriptors = self.broadcast_stream.descriptors
        if keyed is not None:
            if not isinstance(func, KeyedBroadcastProcessFunction):
                raise InvalidProgramError(
                    f"a keyed stream connected with a broadcast stream expects a KeyedBroadcastProcessFunction; "
                    f"got a {type(func).__name__}; hint: subclass strom.KeyedBroadcastProcessFunction"
                )
            operator: Any = CoBroadcastWithKeyedOperator(func, descriptors, keyed.key_selector)
        else:
            if not isinstance(func, BroadcastProcessFunction):
                hint = (
                    "key_by(...) the stream first"
                    if isinstance(func, KeyedBroadcastProcessFunction)
                    else "subclass strom.BroadcastProcessFunction"
                )
                raise InvalidProgramError(
                    f"a non-keyed stream connected with a broadcast stream expects a BroadcastProcessFunction; "
                    f"got a {type(func).__name__}; hint: {hint}"
                )
            operator = CoBroadcastWithNonKeyedOperator(func, descriptors)
        return first._two_input(
            "Co-Process-Broadcast" + ("-Keyed" if keyed is not None else ""),
            self.broadcast_stream.get_transformation(),
            operator,
            output_type,
            "BroadcastConnectedStream.process()",
        )
