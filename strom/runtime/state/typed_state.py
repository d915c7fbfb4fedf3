"""Typed views of keyed state: a state whose descriptor declares a type (PyFlink's
``ValueStateDescriptor("total", Types.FLOAT())``) refuses a value that does not fit it, with an error naming the
state, as PyFlink's state serializers do. Like PyFlink's state (a write-through cache in the Python worker), it
gives back the objects it was given: a ``FLOAT`` state holding ``0.1 + 0.7`` reads ``0.7999999999999999``, not the
32-bit rounding. States without a declared type are the heap states themselves: no view, no added work."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from strom.exceptions import InvalidProgramError

if TYPE_CHECKING:
    from strom.api.state import StateDescriptor
    from strom.api.typeinfo import TypeInformation

__all__ = ["typed_view"]


def _converter(type_info: TypeInformation | None, state: str) -> Callable[[Any], Any] | None:
    if type_info is None or type_info.is_pickled():
        return None
    convert = type_info.converter()

    def checked(value: Any) -> Any:
        try:
            return convert(value)
        except (TypeError, ValueError, OverflowError) as exc:
            raise InvalidProgramError(
                f"expected a value of {type_info!r} for state '{state}'; got {value!r:.80}: {exc}; "
                "hint: write values of the state's declared type, or declare the type you store"
            ) from None

    return checked


class _View:
    """Delegates every call to the heap state; subclasses convert what is written."""

    def __init__(self, inner: Any, convert: Callable[[Any], Any]) -> None:
        self._inner = inner
        self._convert = convert

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _ValueView(_View):
    def update(self, value: Any) -> None:
        if value is not None:
            self._convert(value)
        self._inner.update(value)


class _AppendingView(_View):  # list, reducing: add() takes a value of the declared type
    def add(self, value: Any) -> None:
        self._convert(value)
        self._inner.add(value)

    def add_all(self, values: Iterable[Any]) -> None:
        values = list(values)
        for v in values:
            self._convert(v)
        self._inner.add_all(values)

    def update(self, values: Iterable[Any]) -> None:
        values = list(values)
        for v in values:
            self._convert(v)
        self._inner.update(values)


class _MapView(_View):
    def __init__(self, inner: Any, key: Callable[[Any], Any], value: Callable[[Any], Any]) -> None:
        super().__init__(inner, value)
        self._key = key

    def put(self, key: Any, value: Any) -> None:
        self._key(key)
        self._convert(value)
        self._inner.put(key, value)

    def put_all(self, entries: Mapping[Any, Any]) -> None:
        for k, v in entries.items():
            self._key(k)
            self._convert(v)
        self._inner.put_all(entries)


def _identity(value: Any) -> Any:
    return value


def typed_view(state: Any, descriptor: StateDescriptor) -> Any:
    """``state`` itself when ``descriptor`` declares no type; otherwise a view checking what is written."""
    from strom.api.state import MapStateDescriptor, ValueStateDescriptor

    name = descriptor.name
    if isinstance(descriptor, MapStateDescriptor):
        key = _converter(descriptor.key_type_info, name)
        value = _converter(descriptor.value_type_info, name)
        if key is None and value is None:
            return state
        return _MapView(state, key or _identity, value or _identity)
    from strom.api.state import AggregatingStateDescriptor

    if isinstance(descriptor, AggregatingStateDescriptor):  # add() takes inputs, not accumulators
        return state
    convert = _converter(descriptor.get_type_info(), name)
    if convert is None:
        return state
    if isinstance(descriptor, ValueStateDescriptor):
        return _ValueView(state, convert)
    return _AppendingView(state, convert)
