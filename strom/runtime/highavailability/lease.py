"""The leader lease and the election state machine (Flink's ``DefaultLeaderElectionService`` over a lease, as its
Kubernetes HA services run it): pure — events in, actions out, no files, threads or clocks.

A lease is a small record with a **generation**: every write creates the next generation, and a write succeeds only
if that generation did not exist yet (a conditional create, :mod:`lease_store`). So at most one contender wins each
generation, and the newest generation is the lease. It names the holder, its **session id** — the fencing token,
Flink's leader session id / ``JobMasterId``: new at every acquisition, kept across renewals — the leader's addresses
(empty until the leader confirmed them) and when it expires (wall-clock milliseconds).

A contender, each ``retry-period``, reads the newest lease and calls :meth:`LeaderElection.on_observed`:

- STANDBY: a missing, expired or released lease → CONTENDING with a write of generation + 1 and a new session id;
- CONTENDING: (the write's outcome, :meth:`on_write_result`) won → LEADER, :class:`GrantLeadership`; lost → STANDBY;
- LEADER: the newest lease still its own and not expired on its clock → a renewal (generation + 1, same session,
  ``expires = now + lease-duration``); otherwise, or when a renewal loses its generation, :class:`RevokeLeadership`
  and STANDBY. A leader that was paused past its lease finds it expired on its own clock before it reads anything.

:func:`lease_accepts` is the fencing check whoever commits or deploys on a leader's behalf runs against a freshly
read lease: the token must be the newest lease's session and that lease not expired.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

__all__ = [
    "GrantLeadership",
    "LeaderElection",
    "LeaderLease",
    "LeaderState",
    "LeaseAction",
    "RevokeLeadership",
    "WriteLease",
    "lease_accepts",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaderLease:
    generation: int
    holder: str
    #: the fencing token; ``""`` for a released lease
    session_id: str
    expires_at_ms: int
    #: the leader's RPC endpoint (``host:port``) and REST URL; empty until it confirmed its leadership
    rpc_address: str = ""
    rest_url: str = ""

    def expired(self, now_ms: int) -> bool:
        return now_ms >= self.expires_at_ms

    @property
    def released(self) -> bool:
        return not self.session_id

    def to_json(self) -> str:
        return json.dumps(
            {
                "generation": self.generation,
                "holder": self.holder,
                "session_id": self.session_id,
                "expires_at_ms": self.expires_at_ms,
                "rpc_address": self.rpc_address,
                "rest_url": self.rest_url,
            }
        )

    @classmethod
    def from_json(cls, text: str) -> LeaderLease:
        raw: Any = json.loads(text)
        return cls(
            generation=int(raw["generation"]),
            holder=str(raw["holder"]),
            session_id=str(raw["session_id"]),
            expires_at_ms=int(raw["expires_at_ms"]),
            rpc_address=str(raw.get("rpc_address", "")),
            rest_url=str(raw.get("rest_url", "")),
        )


def lease_accepts(latest: LeaderLease | None, token: str, now_ms: int) -> bool:
    """Whether ``token`` is the fencing token of the current leader according to ``latest`` (the newest lease)."""
    return latest is not None and bool(token) and latest.session_id == token and not latest.expired(now_ms)


class LeaderState(enum.Enum):
    STANDBY = "STANDBY"
    CONTENDING = "CONTENDING"
    LEADER = "LEADER"


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteLease:
    """Create ``lease`` if its generation does not exist yet; report with :meth:`LeaderElection.on_write_result`."""

    lease: LeaderLease


@dataclass(frozen=True, slots=True, kw_only=True)
class GrantLeadership:
    session_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RevokeLeadership:
    session_id: str
    reason: str


LeaseAction = WriteLease | GrantLeadership | RevokeLeadership


class LeaderElection:
    """One contender's view of the election."""

    def __init__(self, *, contender_id: str, lease_duration_ms: int, new_session: Callable[[], str]) -> None:
        if lease_duration_ms <= 0:
            raise ValueError(f"expected a lease duration > 0 ms; got {lease_duration_ms}")
        self.contender_id = contender_id
        self.lease_duration_ms = lease_duration_ms
        self._new_session = new_session
        self.state = LeaderState.STANDBY
        #: the session of the leadership held or being acquired ("" in STANDBY)
        self.session_id = ""
        #: until when this contender may act as leader, on its own clock
        self.valid_until_ms = 0
        self._writing: LeaderLease | None = None
        self._rpc_address = ""
        self._rest_url = ""
        self._history: list[str] = []

    # -- events ------------------------------------------------------------------------------------------
    def on_observed(self, latest: LeaderLease | None, now_ms: int) -> list[LeaseAction]:
        """A tick: ``latest`` is the newest lease just read (None: none was ever written)."""
        if self._writing is not None:
            raise RuntimeError("expected the outcome of the pending lease write before the next tick")
        if self.state is LeaderState.LEADER:
            if now_ms >= self.valid_until_ms:
                return self._revoke("the lease expired before it was renewed (the JobManager was paused or slow)")
            if latest is None or latest.session_id != self.session_id:
                holder = latest.holder if latest is not None else "nobody"
                return self._revoke(f"the lease is held by {holder} now")
            return [self._write(replace(self._lease_from(latest, now_ms), session_id=self.session_id))]
        if self.state is LeaderState.STANDBY and (latest is None or latest.released or latest.expired(now_ms)):
            self.state = LeaderState.CONTENDING
            self.session_id = self._new_session()
            self._rpc_address = self._rest_url = ""
            return [self._write(replace(self._lease_from(latest, now_ms), session_id=self.session_id))]
        return []

    def on_write_result(self, won: bool, now_ms: int) -> list[LeaseAction]:
        """The pending write created its generation (``won``) or found it taken."""
        lease = self._writing
        if lease is None:
            raise RuntimeError("expected a pending lease write; got none")
        self._writing = None
        if self.state is LeaderState.CONTENDING:
            if not won:
                self._to_standby("lost the race for the lease")
                return []
            self.state = LeaderState.LEADER
            self.valid_until_ms = lease.expires_at_ms
            self._log(f"leader with session {self.session_id} (generation {lease.generation})")
            return [GrantLeadership(session_id=self.session_id)]
        if self.state is LeaderState.LEADER:
            if not won:
                return self._revoke(f"another contender wrote lease generation {lease.generation} first")
            self.valid_until_ms = lease.expires_at_ms
        return []

    def on_write_failed(self, now_ms: int) -> list[LeaseAction]:
        """The pending write failed (an I/O error): its generation is unknown; a leader stays one until its lease
        runs out on its own clock (the next tick revokes it then)."""
        self._writing = None
        if self.state is LeaderState.CONTENDING:
            self._to_standby("the lease write failed")
        return []

    def confirm_leadership(self, rpc_address: str, rest_url: str) -> None:
        """The leader's components serve: the next renewal publishes where (Flink's ``confirmLeadership``)."""
        if self.state is not LeaderState.LEADER:
            raise RuntimeError(f"expected to confirm a held leadership; got {self.state.value}")
        self._rpc_address, self._rest_url = rpc_address, rest_url

    def release(self, latest: LeaderLease | None, now_ms: int) -> list[LeaseAction]:
        """Stepping down on purpose (the JobManager stops): write a released lease so a standby need not wait for
        it to expire."""
        if self.state is not LeaderState.LEADER or latest is None or latest.session_id != self.session_id:
            return []
        session = self.session_id
        lease = replace(self._lease_from(latest, now_ms), session_id="", expires_at_ms=now_ms, rpc_address="")
        lease = replace(lease, rest_url="")
        self._to_standby("released the lease")
        self._writing = lease
        return [WriteLease(lease=lease), RevokeLeadership(session_id=session, reason="the JobManager stops")]

    # -- queries -----------------------------------------------------------------------------------------
    def is_leader(self, now_ms: int) -> bool:
        return self.state is LeaderState.LEADER and now_ms < self.valid_until_ms

    def story(self) -> list[str]:
        return list(self._history)

    def validate(self) -> None:
        if self.state is LeaderState.STANDBY:
            assert not self.session_id, "a standby holds no session"
        else:
            assert self.session_id, f"{self.state.value} without a session"
        if self.state is LeaderState.CONTENDING:
            assert self._writing is not None, "contending without a pending lease write"
        if self._writing is not None and self.state is not LeaderState.STANDBY:
            assert self._writing.session_id == self.session_id, "a pending write of another session"

    # -- internals ---------------------------------------------------------------------------------------
    def _lease_from(self, latest: LeaderLease | None, now_ms: int) -> LeaderLease:
        return LeaderLease(
            generation=(latest.generation + 1) if latest is not None else 1,
            holder=self.contender_id,
            session_id=self.session_id,
            expires_at_ms=now_ms + self.lease_duration_ms,
            rpc_address=self._rpc_address,
            rest_url=self._rest_url,
        )

    def _write(self, lease: LeaderLease) -> WriteLease:
        self._writing = lease
        return WriteLease(lease=lease)

    def _revoke(self, reason: str) -> list[LeaseAction]:
        session = self.session_id
        self._to_standby(reason)
        return [RevokeLeadership(session_id=session, reason=reason)]

    def _to_standby(self, reason: str) -> None:
        self._log(f"standby: {reason}")
        self.state = LeaderState.STANDBY
        self.session_id = ""
        self.valid_until_ms = 0
        self._rpc_address = self._rest_url = ""

    def _log(self, line: str) -> None:
        self._history.append(line)
        del self._history[:-50]
