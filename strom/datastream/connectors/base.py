"""PyFlink's ``pyflink.datastream.connectors.base`` module path: ``DeliveryGuarantee`` (Flink's connector-base one,
taken by ``KafkaSink`` and ``RedisStreamSink``)."""

from strom.connectors.redis.sink import DeliveryGuarantee

__all__ = ["DeliveryGuarantee"]
