"""From a consumed Kafka record to what the listener sees (SEMANTICS section 6)."""

from __future__ import annotations

from dataclasses import dataclass

from rmqcompat import properties as props
from rmqcompat.consumer.tag_filter import TagFilter
from rmqcompat.errors import InvalidNameError, MalformedHeaderError
from rmqcompat.message import MessageExt
from rmqcompat.topics.naming import validate_topic
from rmqcompat.wire import TopicDecoder


def reset_retry_topic(msg: MessageExt, own_retry_topic: str) -> None:
    """RocketMQ's ``resetRetryAndNamespace``; without ``RETRY_TOPIC`` the topic stays.

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


@dataclass(frozen=True)
class InboundTopic:
    """Everything the poll thread needs per physical topic, resolved once per topic.

    ``tags`` is None when every tag is wanted (``"*"``), so the filter costs nothing then.
    """

    decoder: TopicDecoder
    own_retry: str | None  # set when this is the group's retry topic (its topic is reset)
    tags: TagFilter | None

    @property
    def plain(self) -> bool:
        """Its messages need neither the retry-topic reset nor a tag filter: the intake
        may take a run of them in one call."""
        return self.own_retry is None and self.tags is None

    def where(self, partition: int) -> tuple[str, str, int]:
        """(physical topic, logical topic, partition): where a run of records was read."""
        return self.decoder.physical, self.decoder.logical, partition

    @classmethod
    def of(cls, physical: str, own_retry: str, tag_filter: TagFilter | None) -> InboundTopic:
        """Raises InvalidNameError: ``physical`` is not a name rmqcompat produces."""
        decoder = TopicDecoder.of(physical)
        wanted = tag_filter if tag_filter is not None and tag_filter.tags is not None else None
        return cls(decoder, own_retry if decoder.logical == own_retry else None, wanted)
