"""A new idempotent producer gets its producer id as soon as a broker is up.

librdkafka asks for an idempotent producer's id when the client is created, before any
broker connection is up, and then looks again on a 500 ms timer unless a metadata answer
comes in meanwhile; every record waits for the id. So without a metadata request of its
own, the first send of every new producer waited about half a second (on a local Apache
Kafka broker: 505-518 ms from creation to the first acknowledgement, against 14-20 ms
after :func:`ask_for_producer_id`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from confluent_kafka import KafkaException, Producer

from rmqcompat.reachability import PROBE_TOPIC

#: librdkafka's own interval between two requests for the id: waiting longer than this
#: for the metadata answer gains nothing.
ID_RETRY_S = 0.5


def new_idempotent_producer(settings: Mapping[str, Any]) -> Producer:
    """A ``Producer`` of ``settings`` that asked for its id (see the module docstring).

    Raises:
        KafkaException: librdkafka refused the settings.
    """
    producer = Producer(dict(settings))
    ask_for_producer_id(producer)
    return producer


def ask_for_producer_id(producer: Producer) -> None:
    """Ask for metadata twice, waiting up to :data:`ID_RETRY_S` for each answer.

    The first answer can come over the bootstrap connection, which librdkafka closes as
    soon as that answer names the brokers: the id is then asked for with no connection up.
    The second request goes to a broker by its id, and its answer finds that connection
    up. (With the first request alone, 11 of 15 new producers on a loaded machine still
    waited 0.5-1 s for their first acknowledgement; with both, none of 15 waited over 50
    ms.) What the requests name does not matter: librdkafka looks for the id after every
    metadata answer, so they name
    :data:`~rmqcompat.reachability.PROBE_TOPIC` only.
    """
    try:
        producer.list_topics(PROBE_TOPIC, timeout=ID_RETRY_S)
        producer.list_topics(PROBE_TOPIC, timeout=ID_RETRY_S)
    except KafkaException:
        pass  # no broker answered yet: librdkafka's timer asks again; records wait for it
