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
until the consuming task thread deserializes them.
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
    "decode_partition_id",
    "encode_add_credit",
    "encode_buffer_header",
    "encode_cancel",
    "encode_error",
    "encode_partition_request",
]

BUFFER_RESPONSE = 0
PARTITION_REQUEST = 1
ADD_CREDIT = 2
ERROR_RESPONSE = 3
CANCEL_REQUEST = 4

DATA_BUFFER = 0
EVENT_BUFFER = 1
END_OF_PARTITION_BUFFER = 2

BUFFER_HEADER = struct.Struct("!BIIIB")
REQUEST_HEADER = struct.Struct("!BIII")
CREDIT = struct.Struct("!BII")
RECEIVER = struct.Struct("!BI")


def encode_buffer_header(receiver_id: int, seq: int, backlog: int, kind: int) -> bytes:
    return BUFFER_HEADER.pack(BUFFER_RESPONSE, receiver_id, seq & 0xFFFFFFFF, backlog, kind)


def encode_partition_request(
    receiver_id: int, partition_id: ResultPartitionID, subpartition: int, credit: int
) -> bytes:
    pid = f"{partition_id.result_id}|{partition_id.producer_subtask}|{partition_id.attempt_id}"
    return REQUEST_HEADER.pack(PARTITION_REQUEST, receiver_id, credit, subpartition) + pid.encode()


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
