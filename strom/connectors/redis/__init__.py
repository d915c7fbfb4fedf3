"""The Redis Streams connector (redis-py, ``pip install 'strom[redis]'``): ``RedisStreamSource`` (replayable,
exactly-once, bounded or not) and ``RedisStreamSink`` (``XADD``, at-least-once or exactly-once)."""

from strom.connectors.redis.connection import RedisConnectionOptions
from strom.connectors.redis.sink import DeliveryGuarantee, RedisStreamCommittable, RedisStreamSink
from strom.connectors.redis.source import RedisStreamEntry, RedisStreamSource

__all__ = [
    "DeliveryGuarantee",
    "RedisConnectionOptions",
    "RedisStreamCommittable",
    "RedisStreamEntry",
    "RedisStreamSink",
    "RedisStreamSource",
]
