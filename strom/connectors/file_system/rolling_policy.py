"""When a part file rolls — is closed and becomes pending (Flink's ``RollingPolicy``).

    RollingPolicy.default_rolling_policy(part_size="64 mb", rollover_interval="5 min", inactivity_interval="1 min")
    RollingPolicy.on_checkpoint_rolling_policy()            # bulk formats: only at checkpoints (and part size)

A policy is asked on three occasions, as Flink's: before records are appended (``should_roll_on_event``), when
the writer's processing-time check fires (``should_roll_on_processing_time``, every ``bucket check interval``
even without records: inactivity and rollover need no new records) and at checkpoints
(``should_roll_on_checkpoint``). ``DefaultRollingPolicy`` keeps a part open across checkpoints (it rolls one
only past its part size, as Flink's), so a row-format part on a local filesystem grows until size, rollover or
inactivity roll it; ``OnCheckpointRollingPolicy`` rolls at every checkpoint. Bulk formats and object stores
roll at every checkpoint whatever the policy (their parts cannot be resumed: :mod:`.file_writer`).

Sizes accept bytes (int) or Flink's memory strings (``"128 mb"``); intervals milliseconds (int),
``timedelta`` or Flink's duration strings (``"60 s"``, ``"1 min"``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from datetime import timedelta

from strom.config_units import parse_duration, parse_memory_size
from strom.exceptions import InvalidProgramError

__all__ = ["DefaultRollingPolicy", "OnCheckpointRollingPolicy", "PartFileInfo", "RollingPolicy"]


@dataclass(slots=True)
class PartFileInfo:
    """An open part file as a policy sees it (Flink's ``PartFileInfo``); times in ms of the writer's clock."""

    bucket_id: str
    creation_time: float
    last_update_time: float
    size: int


class RollingPolicy(ABC):
    """Decides when an open part file rolls."""

    __slots__ = ()

    def should_roll_on_checkpoint(self, part: PartFileInfo) -> bool:
        """Roll ``part`` at a checkpoint? (A subclass keeps it open by answering false; the default rolls.)"""
        return True

    @abstractmethod
    def should_roll_on_event(self, part: PartFileInfo, added_bytes: int, current_time: float) -> bool:
        """Roll ``part`` before appending ``added_bytes`` more (0 when a bulk format cannot tell) at
        ``current_time``?"""

    @abstractmethod
    def should_roll_on_processing_time(self, part: PartFileInfo, current_time: float) -> bool: ...

    @staticmethod
    def default_rolling_policy(
        part_size: int | str = 128 * 1024 * 1024,
        rollover_interval: int | str | timedelta = 60_000,
        inactivity_interval: int | str | timedelta = 60_000,
    ) -> DefaultRollingPolicy:
        """PyFlink's ``RollingPolicy.default_rolling_policy``: roll at ``part_size`` bytes, after
        ``rollover_interval`` and after ``inactivity_interval`` without records."""
        return DefaultRollingPolicy(
            max_part_size_bytes=_bytes("part_size", part_size),
            rollover_interval_ms=_millis("rollover_interval", rollover_interval),
            inactivity_interval_ms=_millis("inactivity_interval", inactivity_interval),
        )

    @staticmethod
    def on_checkpoint_rolling_policy(part_size: int | str | None = None) -> OnCheckpointRollingPolicy:
        """PyFlink's ``RollingPolicy.on_checkpoint_rolling_policy``: roll only at checkpoints — and at
        ``part_size`` bytes if given (Flink's ``CheckpointRollingPolicy``; bulk formats' policy)."""
        size = None if part_size is None else _bytes("part_size", part_size)
        return OnCheckpointRollingPolicy(max_part_size_bytes=size)


@dataclass(frozen=True, slots=True, kw_only=True)
class DefaultRollingPolicy(RollingPolicy):
    """Roll a part when it would grow past ``max_part_size_bytes``, is ``rollover_interval_ms`` old or got no
    records for ``inactivity_interval_ms`` (Flink's ``DefaultRollingPolicy``); a checkpoint rolls it only when it is
    past its size, as Flink's."""

    max_part_size_bytes: int = 128 * 1024 * 1024
    rollover_interval_ms: int = 60_000
    inactivity_interval_ms: int = 60_000

    def __post_init__(self) -> None:
        for what, value in (
            ("max_part_size_bytes", self.max_part_size_bytes),
            ("rollover_interval_ms", self.rollover_interval_ms),
            ("inactivity_interval_ms", self.inactivity_interval_ms),
        ):
            _positive(f"DefaultRollingPolicy.{what}", value)

    def should_roll_on_checkpoint(self, part: PartFileInfo) -> bool:
        return part.size > self.max_part_size_bytes

    def should_roll_on_event(self, part: PartFileInfo, added_bytes: int, current_time: float) -> bool:
        return part.size + added_bytes > self.max_part_size_bytes or self.should_roll_on_processing_time(
            part, current_time
        )

    def should_roll_on_processing_time(self, part: PartFileInfo, current_time: float) -> bool:
        return (
            current_time - part.creation_time >= self.rollover_interval_ms
            or current_time - part.last_update_time >= self.inactivity_interval_ms
        )

    def should_roll(self, part_size: int, added_bytes: int, part_age_ms: float) -> bool:
        """Whether an open part of ``part_size`` bytes and ``part_age_ms`` must roll before ``added_bytes``."""
        return part_size + added_bytes > self.max_part_size_bytes or part_age_ms >= self.rollover_interval_ms


@dataclass(frozen=True, slots=True, kw_only=True)
class OnCheckpointRollingPolicy(RollingPolicy):
    """Roll at checkpoints only, and at ``max_part_size_bytes`` if set (Flink's ``OnCheckpointRollingPolicy``
    and ``CheckpointRollingPolicy``)."""

    max_part_size_bytes: int | None = None

    def __post_init__(self) -> None:
        if self.max_part_size_bytes is not None:
            _positive("OnCheckpointRollingPolicy.max_part_size_bytes", self.max_part_size_bytes)

    def should_roll_on_checkpoint(self, part: PartFileInfo) -> bool:
        return True

    def should_roll_on_event(self, part: PartFileInfo, added_bytes: int, current_time: float) -> bool:
        limit = self.max_part_size_bytes
        return limit is not None and part.size + added_bytes > limit

    def should_roll_on_processing_time(self, part: PartFileInfo, current_time: float) -> bool:
        return False


def _positive(what: str, value: object) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise InvalidProgramError(
            f"{what} must be a positive int; got {value!r}; "
            "hint: RollingPolicy.default_rolling_policy(part_size='128 mb', rollover_interval='60 s')"
        )


def _bytes(what: str, value: object) -> int:
    if isinstance(value, str):
        try:
            value = parse_memory_size(value)
        except ValueError as exc:
            raise InvalidProgramError(
                f"{what} must be a size in bytes or a memory string; got {value!r} ({exc}); hint: '128 mb'"
            ) from None
    _positive(what, value)
    assert isinstance(value, int)
    return value


def _millis(what: str, value: object) -> int:
    if isinstance(value, str):
        try:
            value = parse_duration(value)
        except ValueError as exc:
            raise InvalidProgramError(
                f"{what} must be milliseconds, a timedelta or a duration string; got {value!r} ({exc}); "
                "hint: '60 s', '15 min' or timedelta(minutes=15)"
            ) from None
    if isinstance(value, timedelta):
        value = value // timedelta(milliseconds=1)
    _positive(what, value)
    assert isinstance(value, int)
    return value
