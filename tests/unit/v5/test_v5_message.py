"""The 5.x Message, its send type and the checks before any I/O (upstream's rules)."""

from __future__ import annotations

import pytest

from rmqcompat import properties as props
from rmqcompat.message import MessageExt
from rmqcompat.v5 import FilterExpression, FilterType, Message, MessageType
from rmqcompat.v5.exceptions import (
    ClientException,
    IllegalArgumentException,
    UnsupportedException,
)
from rmqcompat.v5.message import DELIVERY_TIMESTAMP, MESSAGE_GROUP, send_type
from rmqcompat.v5.outgoing import outgoing


def _message(**fields: object) -> Message:
    msg = Message()
    msg.topic = "T"
    msg.body = b"b"
    for name, value in fields.items():
        setattr(msg, name, value)
    return msg


def test_keys_are_added_one_at_a_time_and_properties_with_add_property():
    msg = _message(tag="A")
    msg.keys = "k1"
    msg.keys = "k2"
    msg.add_property("p", "v")
    assert msg.keys == {"k1", "k2"}
    assert msg.properties == {"p": "v"}
    assert msg.tag == "A"


@pytest.mark.parametrize(
    ("field", "value", "text"),
    [
        ("topic", "", "topic has not been set yet."),
        ("topic", "bad topic!", "topic"),
        ("body", b"", "body should not be blank."),
        ("tag", " ", "tag should not be blank."),
        ("tag", "a|b", 'tag should not contain "|".'),
        ("keys", "", "key should not be blank."),
        ("message_group", "", "message_group should not be blank."),
        ("delivery_timestamp", 1.5, "delivery_timestamp must be an int"),
    ],
)
def test_bad_fields_raise_illegal_argument(field, value, text):
    with pytest.raises(IllegalArgumentException, match=text.replace("|", r"\|")):
        setattr(Message(), field, value)


def test_blank_property_key_or_value_is_refused():
    with pytest.raises(IllegalArgumentException, match="key should not be blank"):
        Message().add_property(" ", "v")
    with pytest.raises(IllegalArgumentException, match="value should not be blank"):
        Message().add_property("k", "")


def test_group_and_delivery_timestamp_exclude_each_other_both_ways():
    with pytest.raises(IllegalArgumentException, match="should not be set at same time"):
        _message(message_group="g", delivery_timestamp=10)
    with pytest.raises(IllegalArgumentException, match="should not be set at same time"):
        _message(delivery_timestamp=10, message_group="g")


def test_send_type_follows_the_fields_and_a_transaction_excludes_group_and_delay():
    assert send_type(_message(), False) is MessageType.NORMAL
    assert send_type(_message(message_group="g"), False) is MessageType.FIFO
    assert send_type(_message(delivery_timestamp=10), False) is MessageType.DELAY
    assert send_type(_message(), True) is MessageType.TRANSACTION
    for fields in ({"message_group": "g"}, {"delivery_timestamp": 10}):
        with pytest.raises(IllegalArgumentException, match="transactional message"):
            send_type(_message(**fields), True)


def test_outgoing_checks_topic_body_and_size_with_upstreams_text():
    with pytest.raises(IllegalArgumentException, match="topic has not been set yet"):
        empty = Message()
        empty.body = b"x"
        outgoing(empty)
    with pytest.raises(IllegalArgumentException, match="message body is none"):
        no_body = Message()
        no_body.topic = "T"
        outgoing(no_body)
    with pytest.raises(IllegalArgumentException, match="max size=4 bytes"):
        outgoing(_message(body=b"12345"), max_body=4)
    with pytest.raises(IllegalArgumentException, match="must be a Message"):
        outgoing("not a message")  # type: ignore[arg-type]
    with pytest.raises(IllegalArgumentException, match="reserved"):
        msg = _message()
        msg.add_property(props.KEYS, "x")
        outgoing(msg)


def test_outgoing_maps_group_to_the_key_and_seconds_or_ms_to_a_timer():
    fifo = outgoing(_message(message_group="g"))
    assert (fifo.sharding_key, fifo.message_type) == ("g", MessageType.FIFO)
    assert fifo.core.properties[MESSAGE_GROUP] == "g"
    in_seconds = outgoing(_message(delivery_timestamp=1_800_000_000))
    in_ms = outgoing(_message(delivery_timestamp=1_800_000_000_000))
    assert in_seconds.core.deliver_time_ms == in_ms.core.deliver_time_ms == 1_800_000_000_000
    assert in_seconds.core.properties[DELIVERY_TIMESTAMP] == "1800000000000"


def test_received_message_fields():
    properties = {props.TAGS: "A", props.KEYS: "k1 k2", MESSAGE_GROUP: "g", "user": "v"}
    # topic, body, id, queue, offset, born, stored, reconsume times
    ext = MessageExt("T", b"b", "ID", 0, 5, 111, 222, 2, properties)
    msg = Message.received(ext, "ns", "handle")
    assert (msg.message_id, msg.delivery_attempt, msg.receipt_handle) == ("ID", 3, "handle")
    assert (msg.born_timestamp, msg.tag, msg.keys) == (111, "A", {"k1", "k2"})
    assert msg.message_type == MessageType.FIFO and msg.message_group == "g"
    # as RocketMQ's proxy shows it: the group is among the properties too
    assert msg.properties == {"user": "v", MESSAGE_GROUP: "g"}


def test_received_delay_message_hides_its_delivery_time():
    properties = {DELIVERY_TIMESTAMP: "1800000000000", "user": "v"}
    ext = MessageExt("T", b"b", "ID", 0, 5, 111, 222, 0, properties)
    msg = Message.received(ext, "ns", "handle")
    assert msg.delivery_timestamp == 1_800_000_000_000 and msg.properties == {"user": "v"}


@pytest.mark.parametrize(("field", "value"), [("priority", 1), ("lite_topic", "lt")])
def test_priority_and_lite_topic_are_refused_rather_than_ignored(field, value):
    with pytest.raises(UnsupportedException) as caught:
        setattr(Message(), field, value)
    assert caught.value.code == 50100


def test_filter_expression_sql92_is_refused_with_unsupported_exception():
    assert FilterExpression().tag_expression() == "*"
    assert FilterExpression("A || B").tag_expression() == "A || B"
    with pytest.raises(UnsupportedException) as caught:
        FilterExpression("a > 1", FilterType.SQL).tag_expression()
    assert caught.value.code == 50100


def test_client_exception_keeps_its_code_and_prints_it_first():
    exc = ClientException("boom", 40013)
    assert exc.code == 40013 and str(exc) == "40013, boom"
    assert IllegalArgumentException("x").code is None and str(IllegalArgumentException("x")) == "x"
