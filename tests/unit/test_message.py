"""Message and MessageExt: fields, validation before I/O, size limit."""

from __future__ import annotations

import pytest

from rmqcompat import properties as props
from rmqcompat.errors import InvalidNameError, MessageTooLargeError
from rmqcompat.message import DEFAULT_MAX_MESSAGE_SIZE, Message, MessageExt, MessageQueue


def test_default_max_size_is_rocketmqs_4_mib() -> None:
    assert DEFAULT_MAX_MESSAGE_SIZE == 4 * 1024 * 1024


@pytest.mark.parametrize("limit", [1, 10, 1024])
def test_body_of_exactly_max_is_accepted_and_max_plus_one_refused(limit: int) -> None:
    Message("T", b"x" * limit).check_size(limit)
    with pytest.raises(MessageTooLargeError, match=str(limit)):
        Message("T", b"x" * (limit + 1)).check_size(limit)


def test_default_size_limit_applies() -> None:
    Message("T", b"x" * DEFAULT_MAX_MESSAGE_SIZE).check_size()
    with pytest.raises(MessageTooLargeError):
        Message("T", b"x" * (DEFAULT_MAX_MESSAGE_SIZE + 1)).check_size()


def test_size_counts_utf8_bytes_of_text_bodies() -> None:
    message = Message("T", "é" * 3)  # 6 bytes
    assert message.body == "é".encode() * 3
    message.check_size(6)
    with pytest.raises(MessageTooLargeError):
        message.check_size(5)


@pytest.mark.parametrize("topic", ["", "a.b", "t" * 128, "a b"])
def test_illegal_topic_is_refused_on_construction(topic: str) -> None:
    with pytest.raises(InvalidNameError):
        Message(topic)


def test_keys_are_stored_space_separated() -> None:
    assert Message("T", keys=["k1", "k2"]).keys == "k1 k2"
    assert Message("T", keys="k1").keys == "k1"


def test_system_properties_carry_tags_keys_flag_and_user_properties() -> None:
    message = Message("T", tags="TagA", keys=["a", "b"], flag=7, properties={"u": "v"})
    assert message.system_properties() == {
        props.TAGS: "TagA",
        props.KEYS: "a b",
        props.FLAG: "7",
        "u": "v",
    }
    assert Message("T").system_properties() == {}


@pytest.mark.parametrize("name", [props.UNIQ_KEY, props.RETRY_TOPIC, props.DELAY, props.TAGS])
def test_reserved_property_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="reserved"):
        Message("T", properties={name: "x"})
    with pytest.raises(ValueError, match="reserved"):
        Message("T").put_user_property(name, "x")


def test_empty_property_name_is_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        Message("T").put_user_property("", "x")


def _ext(**properties: str) -> MessageExt:
    return MessageExt(
        topic="T",
        body=b"b",
        msg_id="ID",
        queue_id=1,
        queue_offset=5,
        born_timestamp=10,
        store_timestamp=20,
        properties=dict(properties),
    )


def test_message_ext_reads_its_properties() -> None:
    ext = _ext(TAGS="A", KEYS="k1 k2", FLAG="3", RETRY_TOPIC="X", user="u")
    assert (ext.tags, ext.keys, ext.flag) == ("A", "k1 k2", 3)
    assert ext.get_property("RETRY_TOPIC") == "X"
    assert ext.get_property("missing") is None
    assert ext.user_properties() == {"user": "u"}
    assert _ext().flag == 0


def test_to_message_keeps_body_tags_keys_flag_and_user_properties_only() -> None:
    message = _ext(TAGS="A", KEYS="k", FLAG="3", UNIQ_KEY="ID", user="u").to_message()
    assert message == Message("T", b"b", tags="A", keys="k", flag=3, properties={"user": "u"})


def test_message_queue_is_a_hashable_value() -> None:
    assert {MessageQueue("T", 0), MessageQueue("T", 0)} == {MessageQueue("T", 0)}
