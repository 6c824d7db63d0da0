"""Local Kafka-protocol brokers for development and tests (never a runtime dependency).

Kinds (:mod:`rmqcompat.devbroker.kinds`): ``kafka`` (Apache Kafka from Maven Central, needs
Java 17+; one node, or a cluster of several: :class:`DevCluster`), ``tansu`` (embedded, in
memory, the CLI's default) and ``noida`` (optional).
"""

from rmqcompat.devbroker.apache_kafka import KAFKA_VERSION, java_available
from rmqcompat.devbroker.cluster import DevCluster
from rmqcompat.devbroker.errors import DevBrokerError, DevBrokerUnavailableError
from rmqcompat.devbroker.kinds import DEV_BROKER_KINDS, DevBrokerKind
from rmqcompat.devbroker.ports import HOST, free_port
from rmqcompat.devbroker.process import DevBroker

__all__ = [
    "DEV_BROKER_KINDS",
    "HOST",
    "KAFKA_VERSION",
    "DevBroker",
    "DevBrokerError",
    "DevBrokerKind",
    "DevBrokerUnavailableError",
    "DevCluster",
    "free_port",
    "java_available",
]
