"""The ranking functions of Flink's Top-N (``SqlKind.ROW_NUMBER / RANK / DENSE_RANK``) and where each is allowed:
ROW_NUMBER everywhere; RANK and DENSE_RANK in BATCH only, refused on streaming tables with Flink 2.3's reason."""

from __future__ import annotations

from strom.table.errors import TableException

__all__ = ["check_rank_function"]

_NAMES = {"ROW_NUMBER": "ROW_NUMBER", "ROWNUMBER": "ROW_NUMBER", "RANK": "RANK", "DENSE_RANK": "DENSE_RANK"}


def check_rank_function(name: str, streaming: bool) -> str | None:
    """The rank type of the window function ``name`` (None if it is no ranking function)."""
    rank_type = _NAMES.get(name.upper().replace("DENSERANK", "DENSE_RANK"))
    if rank_type in ("RANK", "DENSE_RANK") and streaming:
        raise TableException(f"{rank_type}() on streaming table is not supported currently")
    return rank_type
