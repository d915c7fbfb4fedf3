"""The file source's split enumerators (Flink's ``StaticFileSplitEnumerator`` and
``ContinuousFileSplitEnumerator``), on the JobManager's event loop.

Both list the paths through ``context.call_async`` (blocking I/O in a worker thread, Parquet footers
included) and hand splits out one per request, in path order, to readers that ask
(``handle_split_request``); a request that comes before the listing finished, or while no split is pending,
waits. The static one lists once, then answers "no more splits"; the continuous one lists again every
``discovery_interval`` and adds the files it has not seen. Their checkpoint,
:class:`PendingSplitsCheckpoint`, holds the splits not yet assigned and the paths already seen, so a restored
job reads every file once.
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass
from typing import Any

from strom.api.source import SplitEnumerator, SplitEnumeratorContext
from strom.connectors.file_system.file_enumerator import FileEnumerator
from strom.connectors.file_system.split import FileSourceSplit
from strom.exceptions import ConnectorError

__all__ = ["ContinuousFileSplitEnumerator", "PendingSplitsCheckpoint", "StaticFileSplitEnumerator"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class PendingSplitsCheckpoint:
    """The enumerator's state: splits not yet assigned, the paths already turned into splits, and whether
    the paths were listed at all (a static source restored before its listing lists them then)."""

    splits: tuple[FileSourceSplit, ...] = ()
    already_processed_paths: frozenset[str] = frozenset()
    listed: bool = False


class _FileSplitEnumerator(SplitEnumerator[FileSourceSplit, PendingSplitsCheckpoint]):
    def __init__(
        self,
        context: SplitEnumeratorContext,
        file_enumerator: FileEnumerator,
        checkpoint: PendingSplitsCheckpoint | None = None,
    ) -> None:
        checkpoint = checkpoint or PendingSplitsCheckpoint()
        self.context = context
        self.file_enumerator = file_enumerator
        self.pending: deque[FileSourceSplit] = deque(checkpoint.splits)
        self.seen: set[str] = set(checkpoint.already_processed_paths)
        self.listed = checkpoint.listed
        #: readers that asked for a split none was there for, in order
        self.waiting: dict[int, None] = {}

    def add_reader(self, subtask_id: int) -> None:
        """Readers pull: nothing to do until one asks."""

    def handle_split_request(self, subtask_id: int, requester_hostname: str | None) -> None:
        self.waiting[subtask_id] = None
        self.assign_pending()

    def add_splits_back(self, splits: list[FileSourceSplit], subtask_id: int) -> None:
        self.pending.extendleft(reversed(splits))
        self.assign_pending()

    def snapshot_state(self, checkpoint_id: int) -> PendingSplitsCheckpoint:
        return PendingSplitsCheckpoint(
            splits=tuple(self.pending), already_processed_paths=frozenset(self.seen), listed=self.listed
        )

    def discover(self) -> list[tuple[str, list[FileSourceSplit]]]:
        """In a worker thread: the splits of the files not seen yet (membership tests only on ``seen``)."""
        return self.file_enumerator.enumerate_splits(skip=self.seen)

    def add_discovered(self, found: list[tuple[str, list[FileSourceSplit]]]) -> None:
        for url, splits in found:
            if url not in self.seen:
                self.seen.add(url)
                self.pending.extend(splits)
        self.listed = True
        self.assign_pending()

    def assign_pending(self) -> None:
        readers = self.context.registered_readers()
        for subtask_id in list(self.waiting):
            if subtask_id not in readers:
                del self.waiting[subtask_id]
            elif self.pending:
                del self.waiting[subtask_id]
                self.context.assign_split(self.pending.popleft(), subtask_id)
            elif self.no_more_splits():
                del self.waiting[subtask_id]
                self.context.signal_no_more_splits(subtask_id)
            else:
                return

    def no_more_splits(self) -> bool:
        return False


class StaticFileSplitEnumerator(_FileSplitEnumerator):
    """Lists the paths once; a reader asking after the last split was handed out gets "no more splits"."""

    def start(self) -> None:
        if not self.listed:
            self.context.call_async(self.discover, self._on_listed)

    def _on_listed(self, found: list[tuple[str, list[FileSourceSplit]]] | None, error: BaseException | None) -> None:
        if error is not None:
            if isinstance(error, ConnectorError):
                raise error
            raise ConnectorError(
                f"expected to list the source paths {list(self.file_enumerator.paths)}; got {error!r}; hint: check "
                "that they exist and are readable from the JobManager"
            ) from error
        self.add_discovered(found or [])

    def no_more_splits(self) -> bool:
        return self.listed and not self.pending


class ContinuousFileSplitEnumerator(_FileSplitEnumerator):
    """Lists the paths every ``discovery_interval_ms`` and hands out the splits of files not seen before; a file
    that cannot be split yet (no Parquet footer) is tried again at the next listing."""

    def __init__(
        self,
        context: SplitEnumeratorContext,
        file_enumerator: FileEnumerator,
        discovery_interval_ms: int,
        checkpoint: PendingSplitsCheckpoint | None = None,
    ) -> None:
        super().__init__(context, file_enumerator, checkpoint)
        self.discovery_interval_ms = discovery_interval_ms

    def start(self) -> None:
        self.context.call_async(self.discover, self._on_discovered, 0, self.discovery_interval_ms)

    def discover(self) -> list[tuple[str, list[FileSourceSplit]]]:
        return self.file_enumerator.enumerate_splits(skip=self.seen, skip_unreadable=True)

    def _on_discovered(self, found: Any, error: BaseException | None) -> None:
        if error is not None:  # as Flink: a failed listing is logged and tried again at the next interval
            log.error(
                "listing the source paths %s failed; retrying in %d ms: %r",
                list(self.file_enumerator.paths),
                self.discovery_interval_ms,
                error,
            )
            return
        self.add_discovered(found)
