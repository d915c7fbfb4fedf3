"""The in-flight windows of one key under a merging assigner (Flink's ``MergingWindowSet``).

When windows merge, one of the original windows stays the *state window*: the namespace that keeps
the pane's contents, so merging never moves the elements of the biggest window. The set maps every
in-flight window to its state window. A pure structure: the window operator persists its mapping per
key and restores it::

    windows = MergingWindowSet(EventTimeSessionWindows.with_gap(3), state=restored_mapping)
    actual = windows.add_window(TimeWindow(ts, ts + 3), merge_function)
    state_window = windows.get_state_window(actual)
    if windows.has_updates():
        mapping_state.update(windows.persist())
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from strom.api.windowing.assigners import MergingWindowAssigner
    from strom.api.windowing.windows import Window

__all__ = ["MergeFunction", "MergingWindowSet"]

W = TypeVar("W", bound="Window")

MergeFunction = Callable[[W, Collection[W], W, Collection[W]], None]
"""Flink's ``MergingWindowSet.MergeFunction``, called as
``merge(merge_result, merged_windows, state_window_result, merged_state_windows)``: merge the state of
``merged_state_windows`` into ``state_window_result`` and fix triggers of ``merged_windows``."""


class MergingWindowSet(Generic[W]):
    """Tracks merging windows and their state windows (Flink's ``MergingWindowSet``).

    ``state`` restores a mapping produced by :meth:`persist` (a mapping or ``(window, state_window)``
    pairs, as Flink's ``ListState<Tuple2<W, W>>``).
    """

    def __init__(
        self,
        window_assigner: MergingWindowAssigner[Any, W],
        state: Mapping[W, W] | Iterable[tuple[W, W]] | None = None,
    ) -> None:
        self.window_assigner = window_assigner
        entries = state.items() if isinstance(state, Mapping) else (state or ())
        self._mapping: dict[W, W] = dict(entries)
        self._initial_mapping: dict[W, W] = dict(self._mapping)

    def persist(self) -> dict[W, W]:
        """The mapping from in-flight window to state window, picklable; restore with ``MergingWindowSet(a, it)``."""
        return dict(self._mapping)

    def has_updates(self) -> bool:
        """True if the mapping changed since construction: Flink's ``persist()`` writes only then."""
        return self._mapping != self._initial_mapping

    def get_state_window(self, window: W) -> W | None:
        """The state window of the in-flight ``window``, or None if it is not in flight."""
        return self._mapping.get(window)

    def retire_window(self, window: W) -> None:
        """Remove ``window`` from the in-flight windows (it fired and was purged, or expired)."""
        if self._mapping.pop(window, None) is None:
            raise ValueError(
                f"expected an in-flight window; got {window!r}, which is not in the in-flight window set; "
                "hint: retire the window that add_window returned"
            )

    def add_window(self, new_window: W, merge_function: MergeFunction[W]) -> W:
        """Add ``new_window``; return the window it ended up in: itself, or the merge result that absorbed it.

        Every merge is reported to ``merge_function`` — except merging a window into itself without
        extending it. The new window never appears among the merged windows or state windows passed to
        it: it has no state yet. Add elements and call triggers on the returned window only.
        """
        windows = [*self._mapping, new_window]
        merge_results: dict[W, list[W]] = {}

        def collect(to_be_merged: Collection[W], merge_result: W) -> None:
            merge_results[merge_result] = list(to_be_merged)

        self.window_assigner.merge_windows(windows, collect)

        result_window = new_window
        merged_new_window = False
        for merge_result, merged_windows in merge_results.items():
            if new_window in merged_windows:
                merged_windows.remove(new_window)
                merged_new_window = True
                result_window = merge_result

            # keep the state window of any merged window (the first) as the state window of the result
            merged_state_window = self._mapping.get(merged_windows[0])
            if merged_state_window is None:
                raise RuntimeError(
                    f"{self.window_assigner!r} merged {merged_windows[0]!r}, which is not in flight; "
                    "a merging assigner may only merge the windows it was given"
                )
            merged_state_windows = [s for s in (self._mapping.pop(w, None) for w in merged_windows) if s is not None]
            self._mapping[merge_result] = merged_state_window
            if merged_state_window in merged_state_windows:
                merged_state_windows.remove(merged_state_window)

            # merging one pre-existing window into itself, without extending it, is no merge
            if not (merge_result in merged_windows and len(merged_windows) == 1):
                merge_function(merge_result, merged_windows, self._mapping[merge_result], merged_state_windows)

        # the new window is on its own: it is its own state window
        if not merge_results or (result_window == new_window and not merged_new_window):
            self._mapping[result_window] = result_window
        return result_window

    def validate(self) -> None:
        """Check the invariant: no two in-flight windows share a state window."""
        state_windows = list(self._mapping.values())
        if len(set(state_windows)) != len(state_windows):
            raise AssertionError(f"two in-flight windows share a state window: {self._mapping!r}")

    def __len__(self) -> int:
        return len(self._mapping)

    def __repr__(self) -> str:
        return f"MergingWindowSet{{windows={self._mapping!r}}}"
