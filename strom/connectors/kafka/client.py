"""The Kafka client of the connector: confluent-kafka (librdkafka), an optional dependency
(``pip install 'strom[kafka]'``); its configuration from a builder's properties, and a reachability check that
names the broker addresses."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from strom.exceptions import ConnectorError

__all__ = ["confluent_kafka_module", "list_topics", "request_timeout_s"]

#: the Java client's property names strom accepts as they are, though librdkafka ignores them
CONNECTOR_ONLY = frozenset({"partition.discovery.interval.ms", "commit.offsets.on.checkpoint", "client.id.prefix"})


def confluent_kafka_module() -> Any:
    try:
        import confluent_kafka
        import confluent_kafka.admin  # a submodule: ``confluent_kafka.admin`` is unset until imported
    except ImportError:
        raise ConnectorError(
            "expected the confluent-kafka package for the Kafka connector; got none installed; "
            "hint: pip install 'strom[kafka]'"
        ) from None
    return confluent_kafka


def client_config(properties: Mapping[str, str]) -> dict[str, Any]:
    """The librdkafka configuration of a builder's properties (the connector's own keys left out)."""
    return {k: v for k, v in properties.items() if k not in CONNECTOR_ONLY}


def request_timeout_s(properties: Mapping[str, str]) -> float:
    return int(properties.get("request.timeout.ms", 30000)) / 1000


def list_topics(admin: Any, properties: Mapping[str, str], topic: str | None = None) -> Any:
    """The cluster's metadata (all topics, or one), failing with the bootstrap addresses when no broker answers
    within ``request.timeout.ms``."""
    kafka = confluent_kafka_module()
    try:
        return admin.list_topics(topic, timeout=request_timeout_s(properties))
    except kafka.KafkaException as exc:
        raise ConnectorError(
            f"expected a Kafka broker at {properties.get('bootstrap.servers')} to answer within "
            f"{request_timeout_s(properties):g} s (request.timeout.ms); got {exc.args[0] if exc.args else exc}; "
            "hint: check set_bootstrap_servers(...) and that the broker runs"
        ) from exc
