"""Drop-in ``Message`` (setters) and ``ReceivedMessage`` (upstream's str/bytes/int fields)."""

from __future__ import annotations

import pytest

from rmqcompat.client import Message, ReceivedMessage
from rmqcompat.consts import MessageProperty
from rmqcompat.errors import InvalidMessageError, InvalidNameError
from rmqcompat.message import MessageExt


def test_setters_build_the_native_message() -> None:
    msg = Message("Orders")
    msg.set_keys("k1")
    msg.set_tags(b"TagA")
    msg.set_body("héllo")
    msg.set_property("property", "test")
    msg.set_property(b"bin", b"v")
    msg.set_delay_time_level(3)
    native = msg.to_native()
    assert (native.topic, native.keys, native.tags, native.body) == (
        "Orders",
        "k1",
        "TagA",
        "héllo".encode(),
    )
    assert native.properties == {"property": "test", "bin": "v"}
    assert native.delay_time_level == 3


def test_bytes_body_is_kept_as_is_and_topic_may_be_bytes() -> None:
    msg = Message(b"T")
    msg.set_body(b"\x00\xff")
    assert msg.to_native().body == b"\x00\xff"
    assert msg.to_native().topic == "T"


def test_reserved_property_names_set_their_field() -> None:
    msg = Message("T")
    msg.set_property("KEYS", "a b")
    msg.set_property("TAGS", "t")
    msg.set_property("DELAY", "2")
    native = msg.to_native()
    assert (native.keys, native.tags, native.delay_time_level, native.properties) == (
        "a b",
        "t",
        2,
        {},
    )
    with pytest.raises(InvalidMessageError, match="DELAY"):
        msg.set_property("DELAY", "soon")


def test_wrong_types_fail_at_the_setter() -> None:
    msg = Message("T")
    with pytest.raises(InvalidMessageError, match="keys"):
        msg.set_keys(5)  # type: ignore[arg-type]
    with pytest.raises(InvalidMessageError, match="delay_time_level"):
        msg.set_delay_time_level("3")  # type: ignore[arg-type]
    with pytest.raises(InvalidMessageError, match="topic"):
        Message(None)  # type: ignore[arg-type]


def test_illegal_names_fail_when_converted_for_sending() -> None:
    with pytest.raises(InvalidNameError):
        Message("bad topic").to_native()


@pytest.mark.parametrize("name", ["UNIQ_KEY", "REAL_TOPIC", "RECONSUME_TIME", "TRAN_MSG"])
def test_a_reserved_property_name_is_refused_at_set_property(name: str) -> None:
    """Not accepted here only to fail the send later: the call that made the mistake says so."""
    msg = Message("T")
    with pytest.raises(InvalidMessageError, match=f"{name}.*reserved"):
        msg.set_property(name, "forged")
    assert name not in msg.properties
    msg.to_native()  # the message stays sendable


def _received(**kw: object) -> ReceivedMessage:
    fields: dict[str, object] = dict(
        topic="Orders",
        body=b"body",
        msg_id="ID1",
        queue_id=2,
        queue_offset=41,
        born_timestamp=1000,
        store_timestamp=2000,
        reconsume_times=3,
        properties={"TAGS": "TagA", "KEYS": "k1 k2", "p": "v", "DELAY": "4"},
        key=b"kk",
    )
    fields.update(kw)
    return ReceivedMessage(MessageExt(**fields))  # type: ignore[arg-type]


def test_received_message_fields_have_upstreams_types() -> None:
    msg = _received()
    assert msg.topic == "Orders" and msg.id == "ID1"
    assert (msg.tags, msg.keys, msg.body) == (b"TagA", b"k1 k2", b"body")
    assert (msg.queue_id, msg.queue_offset, msg.reconsume_times) == (2, 41, 3)
    assert (msg.born_timestamp, msg.store_timestamp, msg.delay_time_level) == (1000, 2000, 4)
    assert (msg.commit_log_offset, msg.prepared_transaction_offset) == (0, 0)
    headers = len("TAGSTagAKEYSk1 k2pvDELAY4")
    assert msg.store_size == len(b"body") + len(b"kk") + headers


def test_properties_are_bytes_and_missing_is_empty() -> None:
    msg = _received()
    assert msg.get_property("p") == b"v"
    assert msg.get_property(b"p") == b"v"
    assert msg["p"] == b"v"
    assert msg.get_property(MessageProperty.TAGS) == b"TagA"
    assert msg[MessageProperty.KEYS] == b"k1 k2"
    assert msg.get_property("missing") == b""
    empty = _received(properties={})
    assert (empty.tags, empty.keys, empty.delay_time_level) == (b"", b"", 0)


def test_str_bytes_and_repr() -> None:
    msg = _received(body="héllo".encode())
    assert str(msg) == "héllo"
    assert bytes(msg) == "héllo".encode()
    assert repr(msg) == "<ReceivedMessage topic='Orders' id='ID1' body=" + repr(msg.body) + ">"
