"""Which operator of a savepoint (Flink's ``OperatorIdentifier``).

In strom an operator's id *is* its uid (``.uid("counts")``); an operator without a uid has the generated id
``op-<n>`` (:mod:`strom.graph.stream_graph`), which changes whenever the program changes — give every stateful
operator a uid. Every method of the state processor API takes a uid string or an :class:`OperatorIdentifier`.
"""

from __future__ import annotations

from dataclasses import dataclass

from strom.exceptions import InvalidProgramError

__all__ = ["OperatorIdentifier", "operator_id_of"]


@dataclass(frozen=True, slots=True)
class OperatorIdentifier:
    """The id of an operator in a savepoint."""

    operator_id: str

    @classmethod
    def for_uid(cls, uid: str) -> OperatorIdentifier:
        """The operator with ``.uid(uid)``."""
        return cls(operator_id_of(uid))

    @classmethod
    def for_operator_id(cls, operator_id: str) -> OperatorIdentifier:
        """An operator by its id as ``_metadata`` records it (a uid, or ``op-<n>`` for one without a uid) — Flink's
        ``forUidHash``."""
        return cls(operator_id_of(operator_id))

    def __str__(self) -> str:
        return self.operator_id


def operator_id_of(uid: str | OperatorIdentifier) -> str:
    """The operator id of a uid string or an :class:`OperatorIdentifier`."""
    if isinstance(uid, OperatorIdentifier):
        return uid.operator_id
    if not isinstance(uid, str) or not uid:
        raise InvalidProgramError(
            f"expected an operator uid (a non-empty str) or an OperatorIdentifier; got {uid!r:.60}; hint: pass the "
            "uid(...) the operator has in the job, e.g. 'counts'"
        )
    return uid
