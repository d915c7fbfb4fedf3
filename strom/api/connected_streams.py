"""``ConnectedStreams``: two streams, possibly of different types, processed by one operator that sees which
input each element came from (Flink's / PyFlink's ``ConnectedStreams``).

    orders.connect(payments).key_by(lambda o: o.id, lambda p: p.order_id).process(MatchPayments())

``map`` / ``flat_map`` take a ``CoMapFunction`` / ``CoFlatMapFunction``; ``process`` a ``CoProcessFunction``
or, on streams keyed alike with ``key_by(key1, key2)`` (or connected keyed streams), a
``KeyedCoProcessFunction`` with keyed state and timers shared by both inputs' elements of a key. The
operator's event time is the minimum of both inputs' watermarks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, TypeVar

from strom.api.co_functions import CoFlatMapFunction, CoMapFunction, CoProcessFunction, KeyedCoProcessFunction
from strom.exceptions import InvalidProgramError
from strom.runtime.operators.base import StreamOperator
from strom.runtime.operators.co.co_process import (
    CoProcessOperator,
    CoStreamFlatMap,
    CoStreamMap,
    KeyedCoProcessOperator,
)

if TYPE_CHECKING:
    from strom.api.datastream import DataStream, KeyedStream

__all__ = ["ConnectedStreams"]

IN1 = TypeVar("IN1")
IN2 = TypeVar("IN2")


class ConnectedStreams(Generic[IN1, IN2]):
    """Two streams, of types ``IN1`` and ``IN2``, into one operator that knows which input each element came from
    (Flink's ``ConnectedStreams``, from :meth:`DataStream.connect`).

    >>> from strom import CoMapFunction
    >>> class Either(CoMapFunction):
    ...     def map1(self, value):
    ...         return ("order", value)
    ...     def map2(self, value):
    ...         return ("payment", value)
    >>> both = env.from_collection([1]).connect(env.from_collection([2.5])).map(Either())
    """

    def __init__(self, first: DataStream[IN1], second: DataStream[IN2]) -> None:
        self.first = first
        self.second = second
        self._env = first.get_execution_environment()

    def _keyed_inputs(self) -> tuple[KeyedStream[IN1, Any], KeyedStream[IN2, Any]] | None:
        first, second = self.first._as_keyed(), self.second._as_keyed()
        if first is not None and second is not None:
            return first, second
        return None

    def _key_selectors(self) -> tuple[Any, Any]:
        keyed = self._keyed_inputs()
        return (keyed[0].key_selector, keyed[1].key_selector) if keyed is not None else (None, None)

    def key_by(self, key_selector1: Any, key_selector2: Any) -> ConnectedStreams[IN1, IN2]:
        """Partition both inputs by key, ``key_selector1`` for the first and ``key_selector2`` for the second;
        elements of both with equal keys meet in the same subtask and share its keyed state."""
        return ConnectedStreams(self.first.key_by(key_selector1), self.second.key_by(key_selector2))

    def _two_input(self, name: str, operator: StreamOperator, output_type: Any = None) -> DataStream[Any]:
        return self.first._two_input(name, self.second.get_transformation(), operator, output_type, name)

    def map(self, func: CoMapFunction[IN1, IN2, Any], output_type: Any = None) -> DataStream[Any]:
        """One output per element of either input (Flink's ``CoMap``): a :class:`CoMapFunction`'s ``map1`` for the first
        input's elements, ``map2`` for the second's; keyed (after :meth:`key_by`), both may use the key's state.

        >>> from strom import CoMapFunction
        >>> class Either(CoMapFunction):
        ...     def map1(self, value):
        ...         return str(value)
        ...     def map2(self, value):
        ...         return value
        >>> strings = env.from_collection([1]).connect(env.from_collection(["a"])).map(Either())
        """
        _check(func, CoMapFunction, "map", "map1(value) and map2(value)")
        return self._two_input("Co-Map", CoStreamMap(func, *self._key_selectors()), output_type)

    def flat_map(self, func: CoFlatMapFunction[IN1, IN2, Any], output_type: Any = None) -> DataStream[Any]:
        """Zero or more outputs per element of either input (Flink's ``CoFlatMap``): a :class:`CoFlatMapFunction`'s
        ``flat_map1`` / ``flat_map2`` yield them.

        >>> from strom import CoFlatMapFunction
        >>> class Words(CoFlatMapFunction):
        ...     def flat_map1(self, value):
        ...         yield from value.split()
        ...     def flat_map2(self, value):
        ...         yield value
        >>> words = env.from_collection(["to be"]).connect(env.from_collection(["or"])).flat_map(Words())
        """
        _check(func, CoFlatMapFunction, "flat_map", "flat_map1(value) and flat_map2(value)")
        return self._two_input("Co-Flat Map", CoStreamFlatMap(func, *self._key_selectors()), output_type)

    def process(
        self,
        func: CoProcessFunction[IN1, IN2, Any] | KeyedCoProcessFunction[Any, IN1, IN2, Any],
        output_type: Any = None,
    ) -> Any:
        """A :class:`CoProcessFunction` per element of either input (Flink's ``CoProcess``: ``process_element1`` /
        ``process_element2``, side outputs); on inputs keyed alike (:meth:`key_by`) a :class:`KeyedCoProcessFunction`,
        with keyed state and timers shared by both inputs' elements of a key.

        >>> from strom import KeyedCoProcessFunction
        >>> class Match(KeyedCoProcessFunction):
        ...     def process_element1(self, order, ctx):
        ...         yield "order", order
        ...     def process_element2(self, payment, ctx):
        ...         yield "paid", payment
        >>> orders, payments = env.from_collection([(1, "tea")]), env.from_collection([(1, 2.5)])
        >>> matched = orders.connect(payments).key_by(lambda o: o[0], lambda p: p[0]).process(Match())
        """
        keyed = self._keyed_inputs()
        if isinstance(func, KeyedCoProcessFunction):
            if keyed is None:
                raise InvalidProgramError(
                    "a KeyedCoProcessFunction needs both connected streams keyed; got a non-keyed input; "
                    "hint: connect(...).key_by(key_selector1, key_selector2).process(...)"
                )
            return self._two_input(
                "KeyedCoProcess",
                KeyedCoProcessOperator(func, keyed[0].key_selector, keyed[1].key_selector),
                output_type,
            )
        _check(func, CoProcessFunction, "process", "process_element1(value, ctx) and process_element2(value, ctx)")
        if keyed is not None:
            return self._two_input(
                "Co-Process", KeyedCoProcessOperator(func, keyed[0].key_selector, keyed[1].key_selector), output_type
            )
        return self._two_input("Co-Process", CoProcessOperator(func), output_type)


def _check(func: object, base: type, method: str, needs: str) -> None:
    if not isinstance(func, base):
        raise InvalidProgramError(
            f"ConnectedStreams.{method}() expects a {base.__name__}; got a {type(func).__name__}; "
            f"hint: subclass strom.{base.__name__} and implement {needs}"
        )
