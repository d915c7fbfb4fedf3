"""Flink's ``StatusWatermarkValve``: combines the watermarks and watermark statuses of a task's input channels.

A pure state machine: :meth:`StatusWatermarkValve.input_watermark` and
:meth:`StatusWatermarkValve.input_watermark_status` take what one input channel delivered and return what the
task must forward downstream (a :class:`~strom.api.eventtime.Watermark` or a :class:`WatermarkStatus`),
usually nothing. The rules, exactly as Flink's:

- every channel starts ACTIVE, aligned, at ``Long.MIN_VALUE``; so does the valve's output;
- a channel's watermark only rises (a lower one is ignored), and is ignored while the channel or the whole
  valve is IDLE;
- the output watermark is the minimum over the *aligned* channels — the active channels whose watermark has
  caught up with the last output watermark — emitted only when it rises;
- a channel turning IDLE leaves the aligned set; if it held the minimum, the minimum of the remaining aligned
  channels is emitted; if it was the last active channel, the valve turns IDLE and, if that channel held
  the output watermark, first emits the maximum watermark over all channels ("flush");
- a channel turning ACTIVE is aligned again at once only if its watermark is not behind the output
  watermark; otherwise it re-aligns when a watermark brings it level. The first active channel turns the
  valve ACTIVE again.

Flink's newer valve also tracks several subpartitions behind one input channel (batch jobs only); strom's
channels carry one subpartition each, so that part is left out.

Where it lives: Flink keeps the valve in ``streaming.runtime.watermarkstatus``, not beside the input processors in
``streaming.runtime.io``; strom follows Flink and keeps it here (:mod:`strom.runtime.watermark`). Its driver is an
input's :class:`~strom.runtime.io.stream_task_network_input.StreamTaskNetworkInput`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, TypeAlias

from strom.api.eventtime import LONG_MIN, Watermark

__all__ = ["InputChannelStatus", "StatusWatermarkValve", "ValveOutput", "WatermarkStatus"]


@dataclass(frozen=True, slots=True)
class WatermarkStatus:
    """Flink's ``WatermarkStatus``: whether a stream (or channel) is ACTIVE or IDLE.

    An IDLE stream promises no records and no watermarks until it turns ACTIVE again, so downstream operators
    do not wait for its watermark. Use the constants ``WatermarkStatus.ACTIVE`` and ``WatermarkStatus.IDLE``.
    """

    status: int

    IDLE_STATUS: ClassVar[int] = -1
    ACTIVE_STATUS: ClassVar[int] = 0
    ACTIVE: ClassVar[WatermarkStatus]
    IDLE: ClassVar[WatermarkStatus]

    def __post_init__(self) -> None:
        if self.status not in (WatermarkStatus.IDLE_STATUS, WatermarkStatus.ACTIVE_STATUS):
            raise ValueError(
                f"WatermarkStatus expected {WatermarkStatus.ACTIVE_STATUS} (ACTIVE) or "
                f"{WatermarkStatus.IDLE_STATUS} (IDLE); got {self.status!r}; hint: use WatermarkStatus.ACTIVE or .IDLE"
            )

    def is_idle(self) -> bool:
        return self.status == WatermarkStatus.IDLE_STATUS

    def is_active(self) -> bool:
        return self.status == WatermarkStatus.ACTIVE_STATUS

    def __repr__(self) -> str:
        return "WatermarkStatus(IDLE)" if self.is_idle() else "WatermarkStatus(ACTIVE)"


WatermarkStatus.ACTIVE = WatermarkStatus(WatermarkStatus.ACTIVE_STATUS)
WatermarkStatus.IDLE = WatermarkStatus(WatermarkStatus.IDLE_STATUS)

ValveOutput: TypeAlias = Watermark | WatermarkStatus
"""What the valve tells its task to forward downstream."""


@dataclass(slots=True)
class InputChannelStatus:
    """Flink's ``StatusWatermarkValve.InputChannelStatus`` (``SubpartitionStatus`` in newer Flink).

    A channel is *aligned* when its watermark takes part in the output minimum: it is ACTIVE and its watermark
    has caught up with the valve's last output watermark.
    """

    watermark: int = LONG_MIN
    watermark_status: WatermarkStatus = WatermarkStatus.ACTIVE
    is_watermark_aligned: bool = True


class StatusWatermarkValve:
    """Flink's ``StatusWatermarkValve`` for ``num_input_channels`` channels (see the module docstring).

    >>> valve = StatusWatermarkValve(2)
    >>> valve.input_watermark(Watermark(5), 0)
    []
    >>> valve.input_watermark(Watermark(3), 1)
    [Watermark(timestamp=3)]
    >>> valve.input_watermark_status(WatermarkStatus.IDLE, 1)
    [Watermark(timestamp=5)]
    """

    __slots__ = ("_channels", "_last_output_watermark", "_last_output_watermark_status", "_validated_watermark")

    def __init__(self, num_input_channels: int) -> None:
        if isinstance(num_input_channels, bool) or not isinstance(num_input_channels, int) or num_input_channels < 1:
            raise ValueError(
                f"StatusWatermarkValve expected at least one input channel; got {num_input_channels!r}; "
                "hint: pass the number of input channels of the task's input gate"
            )
        self._channels = [InputChannelStatus() for _ in range(num_input_channels)]
        self._last_output_watermark = LONG_MIN
        self._last_output_watermark_status = WatermarkStatus.ACTIVE
        self._validated_watermark = LONG_MIN

    # -- inputs ----------------------------------------------------------------------------------------------------

    def input_watermark(self, watermark: Watermark, channel_index: int) -> list[ValveOutput]:
        """Flink's ``inputWatermark``: channel ``channel_index`` delivered ``watermark``; what to forward."""
        channel = self._channels[channel_index]
        # ignore the watermark if its channel, or every channel (the whole valve), is idle
        if not (self._last_output_watermark_status.is_active() and channel.watermark_status.is_active()):
            return []
        timestamp = watermark.timestamp
        # a watermark below the channel's last one is ignored too
        if timestamp <= channel.watermark:
            return []
        channel.watermark = timestamp
        if not channel.is_watermark_aligned and timestamp >= self._last_output_watermark:
            # an unaligned channel (active again after idleness) is aligned once it caught up
            channel.is_watermark_aligned = True
        out: list[ValveOutput] = []
        self._find_and_output_new_min_watermark_across_aligned_channels(out)
        return out

    def input_watermark_status(self, watermark_status: WatermarkStatus, channel_index: int) -> list[ValveOutput]:
        """Flink's ``inputWatermarkStatus``: channel ``channel_index`` turned ACTIVE or IDLE; what to forward.

        A status equal to the channel's current one changes nothing.
        """
        channel = self._channels[channel_index]
        out: list[ValveOutput] = []
        if watermark_status.is_idle() and channel.watermark_status.is_active():
            channel.watermark_status = WatermarkStatus.IDLE
            # an idle channel is not aligned
            channel.is_watermark_aligned = False
            if not self._has_active_channels():
                # no channel will advance any more: flush the max watermark across all channels. The min has
                # been advanced as channels went idle one by one, so the flush is needed only if the channel
                # that just went idle held the output watermark.
                if channel.watermark == self._last_output_watermark:
                    self._find_and_output_max_watermark_across_all_channels(out)
                self._last_output_watermark_status = WatermarkStatus.IDLE
                out.append(WatermarkStatus.IDLE)
            elif channel.watermark == self._last_output_watermark:
                # the channel held the overall min: the remaining aligned channels may yield a new one
                self._find_and_output_new_min_watermark_across_aligned_channels(out)
        elif watermark_status.is_active() and channel.watermark_status.is_idle():
            channel.watermark_status = WatermarkStatus.ACTIVE
            # aligned at once if its watermark from before the idleness has not fallen behind the output
            if channel.watermark >= self._last_output_watermark:
                channel.is_watermark_aligned = True
            if self._last_output_watermark_status.is_idle():
                self._last_output_watermark_status = WatermarkStatus.ACTIVE
                out.append(WatermarkStatus.ACTIVE)
        return out

    # -- state -----------------------------------------------------------------------------------------------------

    @property
    def num_input_channels(self) -> int:
        return len(self._channels)

    @property
    def last_output_watermark(self) -> int:
        """The last watermark the valve emitted (``Long.MIN_VALUE`` before the first)."""
        return self._last_output_watermark

    @property
    def last_output_watermark_status(self) -> WatermarkStatus:
        """IDLE while every channel is idle, else ACTIVE."""
        return self._last_output_watermark_status

    def get_input_channel_status(self, channel_index: int) -> InputChannelStatus:
        """Flink's ``getInputChannelStatus`` (for tests): the live status of one channel; do not modify it."""
        return self._channels[channel_index]

    def validate(self) -> None:
        """Check the invariants; raises :class:`AssertionError` (cheap enough for tests to call after each step)."""
        last = self._last_output_watermark
        if last < self._validated_watermark:
            raise AssertionError(f"output watermark went back from {self._validated_watermark} to {last}")
        self._validated_watermark = last
        for index, channel in enumerate(self._channels):
            caught_up = channel.watermark_status.is_active() and channel.watermark >= last
            if channel.is_watermark_aligned != caught_up:
                raise AssertionError(
                    f"channel {index} must be aligned exactly when active and not behind the output {last}: {channel}"
                )
        if self._last_output_watermark_status.is_idle() == self._has_active_channels():
            raise AssertionError(
                f"valve status {self._last_output_watermark_status} disagrees with the channels {self._channels}"
            )

    def __repr__(self) -> str:
        return (
            f"StatusWatermarkValve(last_output_watermark={self._last_output_watermark}, "
            f"status={self._last_output_watermark_status}, channels={self._channels})"
        )

    # -- Flink's helpers -------------------------------------------------------------------------------------------

    def _has_active_channels(self) -> bool:
        return any(c.watermark_status.is_active() for c in self._channels)

    def _find_and_output_new_min_watermark_across_aligned_channels(self, out: list[ValveOutput]) -> None:
        # Flink keeps the aligned channels in a heap; a scan is as good for a task's handful of channels
        new_min: int | None = None
        for channel in self._channels:
            if channel.is_watermark_aligned and (new_min is None or channel.watermark < new_min):
                new_min = channel.watermark
        # output only a minimum that really comes from an aligned channel and is higher than the last output
        if new_min is not None and new_min > self._last_output_watermark:
            self._last_output_watermark = new_min
            out.append(Watermark(new_min))

    def _find_and_output_max_watermark_across_all_channels(self, out: list[ValveOutput]) -> None:
        max_watermark = max(c.watermark for c in self._channels)
        if max_watermark > self._last_output_watermark:
            self._last_output_watermark = max_watermark
            out.append(Watermark(max_watermark))
