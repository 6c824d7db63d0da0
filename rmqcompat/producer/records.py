"""Message -> Kafka record: the pure part of a send (no I/O, fixed clock).

value = body, key = sharding key, headers = the message's properties plus ``UNIQ_KEY`` and
``BORN_TIMESTAMP``. Scheduled (``delay_time_level``) and timer (``deliver_time_ms``)
messages are parked on a delay-level topic via :mod:`rmqcompat.parking`.
"""

from __future__ import annotations

from dataclasses import dataclass

from rmqcompat import parking
from rmqcompat import properties as props
from rmqcompat.core import CORE
from rmqcompat.errors import InvalidMessageError
from rmqcompat.message import Message
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.wire import OutgoingRecord

ShardingKey = str | bytes | None


@dataclass(frozen=True)
class PreparedRecord:
    """A record ready to produce, with the id it carries and the level it parks on."""

    record: OutgoingRecord
    msg_id: str
    level: int | None = None


def encode_key(sharding_key: ShardingKey) -> bytes | None:
    """Sharding keys become the Kafka record key (UTF-8 for text)."""
    if sharding_key is None or isinstance(sharding_key, bytes):
        return sharding_key
    if isinstance(sharding_key, str):
        return sharding_key.encode("utf-8")
    raise TypeError(f"sharding_key must be str or bytes, not {type(sharding_key).__name__}")


def check_timer(msg: Message, now_ms: int, max_delay_ms: int) -> None:
    """Refuse a timer message due more than ``max_delay_ms`` after ``now_ms``.

    RocketMQ 5's broker refuses such a message (``timerMaxDelaySec``, 3 days by default)
    instead of holding it for months; so does the producer here, before any I/O.

    Raises:
        InvalidMessageError: ``deliver_time_ms`` is too far ahead.
    """
    due = msg.deliver_time_ms
    if due is not None and due - now_ms > max_delay_ms:
        raise InvalidMessageError(
            f"Message.deliver_time_ms {due} is {(due - now_ms) / 1000:.0f} s ahead; "
            f"the maximum is {max_delay_ms // 1000} s (timer_max_delay_sec)"
        )


def message_properties(msg: Message, msg_id: str, now_ms: int) -> dict[str, str]:
    """Every property ``msg`` carries on the wire, with its id, born time and schedule."""
    properties = msg.system_properties()
    properties[props.UNIQ_KEY] = msg_id
    properties[props.BORN_TIMESTAMP] = props.encode_int(now_ms)
    if msg.deliver_time_ms is not None:
        properties[props.TIMER_DELIVER_MS] = props.encode_int(msg.deliver_time_ms)
    elif msg.delay_time_level > 0:
        properties[props.DELAY] = props.encode_int(msg.delay_time_level)
    return properties


def plain_headers(msg: Message, msg_id: str, now_ms: int) -> dict[str, bytes] | None:
    """The headers :func:`build_record` gives ``msg`` when it is sent at once, or None.

    The send hot path: a message without user properties, delay level or timer gets its
    headers in one dict (names unique, in :func:`build_record`'s order; confluent-kafka
    takes a dict as it takes a list, and a dict of str to bytes is never tracked by the
    cyclic garbage collector, where a list and its tuples are). None means "use
    :func:`build_record`" (user properties keep that path so their order and any clash
    with a system name behave exactly as there).
    """
    if msg.properties or msg.deliver_time_ms is not None or msg.delay_time_level > 0:
        return None
    headers: dict[str, bytes] = {}
    if msg.tags:
        headers[props.TAGS] = msg.tags.encode("utf-8")
    if msg.keys:
        headers[props.KEYS] = str(msg.keys).encode("utf-8")
    if msg.flag:
        headers[props.FLAG] = props.encode_int(msg.flag).encode("utf-8")
    headers[props.UNIQ_KEY] = msg_id.encode("utf-8")
    headers[props.BORN_TIMESTAMP] = props.encode_int(now_ms).encode("utf-8")
    return headers


#: :func:`plain_headers` where the compiled core is not built, else the core's.
plain_headers_of = plain_headers if CORE is None else CORE.plain_headers


def build_record(
    msg: Message,
    *,
    physical_topic: str,
    namespace: str,
    levels: DelayLevels,
    msg_id: str,
    now_ms: int,
    sharding_key: ShardingKey = None,
) -> PreparedRecord:
    """The record that sends ``msg``: to ``physical_topic`` now, or parked on a level topic.

    ``physical_topic`` is ``to_kafka_topic(msg.topic, namespace)`` (the producer caches it).
    A timer message whose time has passed is sent at once, without ``TIMER_DELIVER_MS``.

    Raises:
        ConfigError: ``delay_time_level`` names a level outside the table (capped above).
    """
    properties = message_properties(msg, msg_id, now_ms)
    key = encode_key(sharding_key)
    value = msg.body_bytes()
    level = parking.first_level(properties, levels, now_ms)
    if level is None:
        properties.pop(props.TIMER_DELIVER_MS, None)
        record = OutgoingRecord(physical_topic, value, key, props.to_headers(properties))
        return PreparedRecord(record, msg_id)
    record = parking.park(
        value,
        key,
        properties,
        real_topic=msg.topic,
        level=level,
        levels=levels,
        namespace=namespace,
        now_ms=now_ms,
    )
    return PreparedRecord(record, msg_id, level)
