"""The one context object a window operator hands to its trigger, evictor and window function
(Flink's ``WindowOperator.Context``, ``WindowContext`` and ``EvictorContext``), re-pointed at the current key
and window before each call. State it hands out is scoped to the window it was asked for, whatever the
operator does with the backend's namespace afterwards.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from strom.api.output_tag import OutputTag
from strom.api.state import StateDescriptor
from strom.api.windowing.functions import KeyedStateStore, ProcessAllWindowFunction, ProcessWindowFunction

if TYPE_CHECKING:
    from strom.runtime.operators.windowing.window_operator import WindowOperator
    from strom.runtime.state.state_backend import KeyedStateBackend

__all__ = ["WindowContext"]


class _ScopedState:
    """A state object whose every method runs with the backend's namespace set to ``namespace``."""

    __slots__ = ("_backend", "_namespace", "_state")

    def __init__(self, state: Any, backend: KeyedStateBackend, namespace: Any) -> None:
        self._state = state
        self._backend = backend
        self._namespace = namespace

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._state, name)
        if not callable(attr):
            return attr
        backend, namespace = self._backend, self._namespace

        def scoped(*args: Any, **kwargs: Any) -> Any:
            saved = backend.current_namespace
            backend.current_namespace = namespace
            try:
                return attr(*args, **kwargs)
            finally:
                backend.current_namespace = saved

        return scoped


class _StateStore(KeyedStateStore):
    __slots__ = ("_backend", "_namespace")

    def __init__(self, backend: KeyedStateBackend, namespace: Any) -> None:
        self._backend = backend
        self._namespace = namespace

    def get_state(self, descriptor: StateDescriptor) -> Any:
        return _ScopedState(self._backend.get_state(descriptor), self._backend, self._namespace)

    get_list_state = get_map_state = get_reducing_state = get_aggregating_state = get_state


class WindowContext(ProcessWindowFunction.Context[Any], ProcessAllWindowFunction.Context[Any]):
    def __init__(self, operator: WindowOperator) -> None:
        self._op = operator
        backend = operator.keyed_backend
        assert backend is not None
        self._backend: KeyedStateBackend = backend
        self.key: Any = None
        self._window: Any = None
        self.merged_windows: Collection[Any] = ()

    def set(self, key: Any, window: Any, *, merged_windows: Collection[Any] = ()) -> None:
        self.key = key
        self._window = window
        self.merged_windows = merged_windows

    # -- TriggerContext / EvictorContext / WindowAssignerContext ----------------------------------------
    def get_current_processing_time(self) -> int:
        return self._op.timer_service.current_processing_time()

    def get_current_watermark(self) -> int:
        return self._op.current_watermark

    def register_processing_time_timer(self, time: int) -> None:
        self._op.timer_service.register_processing_time_timer(self._window, time)

    def register_event_time_timer(self, time: int) -> None:
        self._op.timer_service.register_event_time_timer(self._window, time)

    def delete_processing_time_timer(self, time: int) -> None:
        self._op.timer_service.delete_processing_time_timer(self._window, time)

    def delete_event_time_timer(self, time: int) -> None:
        self._op.timer_service.delete_event_time_timer(self._window, time)

    def get_partitioned_state(self, state_descriptor: StateDescriptor) -> Any:
        return _ScopedState(self._backend.get_state(state_descriptor), self._backend, self._window)

    def merge_partitioned_state(self, state_descriptor: StateDescriptor) -> None:
        if self.merged_windows:
            self._backend.get_state(state_descriptor).merge_namespaces(self._window, self.merged_windows)

    # -- ProcessWindowFunction.Context -----------------------------------------------------------------
    def window(self) -> Any:
        return self._window

    def current_processing_time(self) -> int:
        return self.get_current_processing_time()

    def current_watermark(self) -> int:
        return self._op.current_watermark

    def window_state(self) -> KeyedStateStore:
        return _StateStore(self._backend, self._window)

    def global_state(self) -> KeyedStateStore:
        return _StateStore(self._backend, None)

    def output(self, output_tag: OutputTag, value: Any) -> None:
        self._op._collector.add_side(output_tag.tag_id, value, self._window.max_timestamp())
