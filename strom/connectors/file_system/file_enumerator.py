"""``FileEnumerator``: the files under the source's paths and their splits (Flink's
``NonSplittingRecursiveEnumerator`` with its ``DefaultFileFilter``). Blocking I/O: the enumerators call it
through ``SplitEnumeratorContext.call_async``, in a worker thread.

Directories are listed recursively; files and directories whose name starts with ``.`` or ``_`` are skipped
(hidden, or in progress: the FileSink's parts are hidden until committed), unless named as a path themselves.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from strom.connectors.file_system import fs as fsspec_urls
from strom.connectors.file_system.split import FileSourceSplit

__all__ = ["FileEnumerator", "FoundFile", "is_hidden"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class FoundFile:
    url: str
    fs_path: str
    size: int


def is_hidden(relative: str) -> bool:
    """Whether a path below a listed directory has a component starting with ``.`` or ``_``."""
    return any(part[:1] in (".", "_") for part in relative.split("/") if part)


@dataclass(frozen=True, slots=True)
class FileEnumerator:
    """Lists the source's ``paths`` and cuts the files into splits with ``create_splits(fs, fs_path, url, size)``."""

    paths: tuple[str, ...]
    storage_options: Mapping[str, Any]
    create_splits: Callable[[Any, str, str, int], list[FileSourceSplit]]

    def list_files(self) -> list[FoundFile]:
        found: dict[str, FoundFile] = {}
        for path in self.paths:
            fs, root = fsspec_urls.resolve(path, self.storage_options, role="source path")
            info = fs.info(root)
            if info.get("type") == "directory":
                prefix = root.rstrip("/") + "/"
                for name, detail in fs.find(root, withdirs=False, detail=True).items():
                    if detail.get("type") == "directory" or is_hidden(name[len(prefix) :]):
                        continue
                    url = fsspec_urls.unstrip(fs, name)
                    found.setdefault(url, FoundFile(url, name, int(detail.get("size") or 0)))
            else:
                url = fsspec_urls.unstrip(fs, root)
                found.setdefault(url, FoundFile(url, root, int(info.get("size") or 0)))
        return [found[url] for url in sorted(found)]

    def enumerate_splits(
        self, skip: Collection[str] = (), *, skip_unreadable: bool = False
    ) -> list[tuple[str, list[FileSourceSplit]]]:
        """``(url, splits)`` of every file not in ``skip``, in path order. With ``skip_unreadable`` (a monitored
        directory) a file whose splits cannot be made — a Parquet file still being written has no footer yet — is
        left out with a warning, to be tried again at the next listing, instead of failing the whole listing."""
        result = []
        for file in self.list_files():
            if file.url in skip:
                continue
            fs, _ = fsspec_urls.resolve(file.url, self.storage_options, role="source path")
            try:
                splits = self.create_splits(fs, file.fs_path, file.url, file.size)
            except Exception as exc:
                if not skip_unreadable:
                    raise
                log.warning(
                    "source file %s cannot be split yet (%r); trying it again at the next listing", file.url, exc
                )
                continue
            result.append((file.url, splits))
        return result


def whole_file_split(fs: Any, fs_path: str, url: str, size: int) -> list[FileSourceSplit]:
    """The one split of a file of a line format (not splittable)."""
    return [FileSourceSplit(split_id=url, path=url, file_size=size)]
