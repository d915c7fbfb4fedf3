"""Wire format of the data plane (Flink's ``NettyMessage``), inside authenticated, versioned frames.

Every frame payload starts with a type byte:

====  ======================  =====================================================
type  message                 body
====  ======================  =====================================================
0     BufferResponse          receiver_id u32, sequence u32, backlog u32, kind u8, data
1     PartitionRequest        receiver_id u32, credit u32, subpartition u32, partition id (utf-8)
2     AddCredit               receiver_id u32, credit u32
3     ErrorResponse           receiver_id u32, message (utf-8)
4     CancelPartitionRequest  receiver_id u32
====  ======================  =====================================================

A buffer's ``kind`` is 0 for data (a serialized batch, sent against credit), 1 for an event and 2 for the
end of the partition (the last buffer of a subpartition). Nothing here is unpickled: buffers stay bytes
until the consuming task thread deserializes them. The ``decode_*`` functions raise
:class:`~strom.exceptions.FrameError` for a message that is too short or carries an unknown type or kind,
so a garbled frame from a peer closes its connection like any other bad frame.
"""

from __future__ import annotations

import struct

from strom.exceptions import FrameError
from strom.runtime.network.result_partition import ResultPartitionID

__all__ = [
    "ADD_CREDIT",
    "BUFFER_RESPONSE",
    "CANCEL_REQUEST",
    "DATA_BUFFER",
    "END_OF_PARTITION_BUFFER",
    "ERROR_RESPONSE",
    "EVENT_BUFFER",
    "PARTITION_REQUEST",
    "PRIORITY_EVENT_BUFFER",
    "decode_add_credit",
    "decode_buffer_header",
    "decode_partition_id",
    "decode_partition_request",
    "decode_receiver",
    "encode_add_credit",
    "encode_buffer_header",
    "encode_cancel",
    "encode_error",
    "encode_partition_request",
    "message_type",
]

BUFFER_RESPONSE = 0
PARTITION_REQUEST = 1
ADD_CREDIT = 2
ERROR_RESPONSE = 3
CANCEL_REQUEST = 4

DATA_BUFFER = 0
EVENT_BUFFER = 1
END_OF_PARTITION_BUFFER = 2
#: an event that overtakes the buffers queued ahead of it at the receiver too (Flink's ``PRIORITIZED_EVENT_BUFFER``:
#: an unaligned checkpoint's barrier)
PRIORITY_EVENT_BUFFER = 3
_BUFFER_KINDS = (DATA_BUFFER, EVENT_BUFFER, END_OF_PARTITION_BUFFER, PRIORITY_EVENT_BUFFER)

BUFFER_HEADER = struct.Struct("!BIIIB")
REQUEST_HEADER = struct.Struct("!BIII")
CREDIT = struct.Struct("!BII")
RECEIVER = struct.Struct("!BI")


def _unpack(layout: struct.Struct, frame: bytes, what: str) -> tuple[int, ...]:
    if len(frame) < layout.size:
        raise FrameError(
            f"expected a {what} message of at least {layout.size} bytes; got {len(frame)}; "
            "hint: the peer sent a truncated or garbled message"
        )
    return layout.unpack_from(frame)


def message_type(frame: bytes) -> int:
    """The type byte of a frame payload."""
    if not frame:
        raise FrameError("expected a data-plane message; got an empty frame; hint: the peer sent a garbled message")
    return frame[0]


def encode_buffer_header(receiver_id: int, seq: int, backlog: int, kind: int) -> bytes:
    return BUFFER_HEADER.pack(BUFFER_RESPONSE, receiver_id, seq & 0xFFFFFFFF, backlog, kind)


def encode_partition_request(
    receiver_id: int, partition_id: ResultPartitionID, subpartition: int, credit: int
) -> bytes:
    pid = f"{partition_id.result_id}|{partition_id.producer_subtask}|{partition_id.attempt_id}"
    return REQUEST_HEADER.pack(PARTITION_REQUEST, receiver_id, credit, subpartition) + pid.encode()


def decode_buffer_header(frame: bytes) -> tuple[int, int, int, int]:
    """``(receiver_id, sequence, backlog, kind)`` of a BufferResponse; its data follows at ``BUFFER_HEADER.size``."""
    _, rid, seq, backlog, kind = _unpack(BUFFER_HEADER, frame, "BufferResponse")
    if kind not in _BUFFER_KINDS:
        raise FrameError(
            f"expected a buffer kind in {_BUFFER_KINDS}; got {kind}; hint: the peer sent a garbled message"
        )
    return rid, seq, backlog, kind


def decode_partition_request(frame: bytes) -> tuple[int, int, int, ResultPartitionID]:
    """``(receiver_id, credit, subpartition, partition_id)`` of a PartitionRequest."""
    _, rid, credit, index = _unpack(REQUEST_HEADER, frame, "PartitionRequest")
    return rid, credit, index, decode_partition_id(frame[REQUEST_HEADER.size :])


def decode_add_credit(frame: bytes) -> tuple[int, int]:
    """``(receiver_id, credit)`` of an AddCredit."""
    _, rid, credit = _unpack(CREDIT, frame, "AddCredit")
    return rid, credit


def decode_receiver(frame: bytes) -> int:
    """The receiver id of an ErrorResponse or a CancelPartitionRequest (any text follows at ``RECEIVER.size``)."""
    _, rid = _unpack(RECEIVER, frame, "ErrorResponse/CancelPartitionRequest")
    return rid


def decode_partition_id(raw: bytes) -> ResultPartitionID:
    try:
        result_id, subtask, attempt = raw.decode().split("|")
        return ResultPartitionID(result_id, int(subtask), attempt)
    except (UnicodeDecodeError, ValueError) as exc:
        raise FrameError(f"expected a partition id 'result|subtask|attempt'; got {raw[:80]!r}") from exc


def encode_add_credit(receiver_id: int, credit: int) -> bytes:
    return CREDIT.pack(ADD_CREDIT, receiver_id, credit)


def encode_error(receiver_id: int, message: str) -> bytes:
    return RECEIVER.pack(ERROR_RESPONSE, receiver_id) + message.encode()


def encode_cancel(receiver_id: int) -> bytes:
    return RECEIVER.pack(CANCEL_REQUEST, receiver_id)
