"""From a consumed Kafka record to what the listener sees (SEMANTICS section 6)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from rmqcompat import properties as props
from rmqcompat.consumer.tag_filter import TagFilter
from rmqcompat.errors import InvalidNameError, MalformedHeaderError
from rmqcompat.message import MessageExt
from rmqcompat.topics.naming import validate_topic
from rmqcompat.wire import TopicDecoder

#: How many ``RETRY_TOPIC`` values a retry topic's intake remembers as checked (see
#: :func:`reset_retry_topic`): a group's retries name the few topics it subscribes to.
CHECKED_KEPT = 256


def reset_retry_topic(
    msg: MessageExt, own_retry_topic: str, checked: dict[str, str] | None = None
) -> None:
    """RocketMQ's ``resetRetryAndNamespace``; without ``RETRY_TOPIC`` the topic stays.

    A legal ``RETRY_TOPIC`` is remembered in ``checked`` (at most :data:`CHECKED_KEPT`,
    all forgotten when full), for :func:`reset_checked`.

    Raises:
        MalformedHeaderError: ``RETRY_TOPIC`` is not a legal topic name (a poison record:
            the listener and every later send-back would carry a topic nobody can have).
    """
    if msg.topic == own_retry_topic:
        original = msg.properties.get(props.RETRY_TOPIC)
        if original:
            try:
                msg.topic = validate_topic(original)
            except InvalidNameError as exc:
                raise MalformedHeaderError(f"header {props.RETRY_TOPIC}: {exc}") from None
            if checked is not None:
                if len(checked) >= CHECKED_KEPT:
                    checked.clear()
                checked[original] = msg.topic


def reset_checked(msg: MessageExt, checked: Mapping[str, str]) -> bool:
    """:func:`reset_retry_topic` of a message of the group's own retry topic, by the
    ``RETRY_TOPIC`` values it already ``checked``: False (``msg`` unchanged) for a value
    not among them, which the caller decides by :func:`reset_retry_topic`. The
    pure-Python reference of the core's ``accept_run`` with a retry topic's names."""
    original = msg.properties.get(props.RETRY_TOPIC)
    if not original:
        return True
    name = checked.get(original)
    if name is None:
        return False
    msg.topic = name
    return True


@dataclass(frozen=True)
class InboundTopic:
    """Everything the poll thread needs per physical topic, resolved once per topic.

    ``tags`` is None when every tag is wanted (``"*"``), so the filter costs nothing then.
    """

    decoder: TopicDecoder
    own_retry: str | None  # set when this is the group's retry topic (its topic is reset)
    tags: TagFilter | None
    #: the group's retry topic: the ``RETRY_TOPIC`` values its messages carried that are
    #: legal (see :func:`reset_retry_topic`); None for any other topic. What the intake
    #: learnt, not what the topic is: left out of equality and the hash.
    checked: dict[str, str] | None = field(default=None, compare=False)

    @property
    def plain(self) -> bool:
        """Its messages need no tag filter: the intake may take a run of them in one call
        (a retry topic's messages while their ``RETRY_TOPIC`` is one already checked)."""
        return self.tags is None

    def where(self, partition: int) -> tuple[str, str, int]:
        """(physical topic, logical topic, partition): where a run of records was read."""
        return self.decoder.physical, self.decoder.logical, partition

    @classmethod
    def of(cls, physical: str, own_retry: str, tag_filter: TagFilter | None) -> InboundTopic:
        """Raises InvalidNameError: ``physical`` is not a name rmqcompat produces."""
        decoder = TopicDecoder.of(physical)
        wanted = tag_filter if tag_filter is not None and tag_filter.tags is not None else None
        if decoder.logical == own_retry:
            return cls(decoder, own_retry, wanted, {})
        return cls(decoder, None, wanted, None)
