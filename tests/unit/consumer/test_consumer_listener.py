import logging

from confluent_kafka import OFFSET_BEGINNING, OFFSET_END, TopicPartition

from rmqcompat.consumer.listener import (
    ConsumeConcurrentlyContext,
    ConsumeConcurrentlyStatus,
    ConsumeFromWhere,
    as_callable,
    invoke,
)
from rmqcompat.consumer.positions import start_positions
from rmqcompat.message import MessageExt, MessageQueue


def _msg(msg_id):
    return MessageExt("T", b"", msg_id, 2, 7, 0, 0)


def _ctx():
    return ConsumeConcurrentlyContext(MessageQueue("T", 2))


def test_context_defaults():
    ctx = _ctx()
    assert ctx.ack_index == 2**31 - 1
    assert ctx.delay_level_when_next_consume == 0
    assert ctx.failed_indexes == set()


def test_none_is_reconsume_later():
    assert invoke(lambda m, c: None, "g", [_msg("a")], _ctx()) == (
        ConsumeConcurrentlyStatus.RECONSUME_LATER,
        False,
    )


def test_exception_is_reconsume_later_and_logged_with_ids(caplog):
    def boom(msgs, ctx):
        raise RuntimeError("bad")

    with caplog.at_level(logging.ERROR, "rmqcompat.consumer"):
        status, raised = invoke(boom, "g1", [_msg("ID1"), _msg("ID2")], _ctx())
    assert status is ConsumeConcurrentlyStatus.RECONSUME_LATER and raised
    text = caplog.text
    assert "g1" in text and "topic=T" in text and "partition=2" in text and "ID1,ID2" in text


def test_object_listener():
    class L:
        def consume_message(self, msgs, ctx):
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    fn = as_callable(L())
    assert invoke(fn, "g", [_msg("a")], _ctx()) == (
        ConsumeConcurrentlyStatus.CONSUME_SUCCESS,
        False,
    )


def test_start_positions_retry_topic_starts_at_beginning_for_new_group():
    tps = [TopicPartition("biz", 0), TopicPartition("retry", 0), TopicPartition("biz", 1)]
    out = start_positions(
        tps, {("biz", 1): 42}, ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET, {"retry"}, lambda x: x
    )
    assert [(tp.topic, tp.partition, tp.offset) for tp in out] == [
        ("biz", 0, OFFSET_END),
        ("retry", 0, OFFSET_BEGINNING),
        ("biz", 1, 42),
    ]


def test_resolve_turns_logical_starts_into_offsets_and_a_failed_lookup_into_invalid():
    from confluent_kafka import OFFSET_INVALID, KafkaError, KafkaException

    from rmqcompat.consumer.positions import resolve

    def watermarks(tp):
        if tp.topic == "down":
            raise KafkaException(KafkaError(KafkaError._TIMED_OUT))
        return (3, 9)

    tps = [
        TopicPartition("a", 0, OFFSET_END),
        TopicPartition("a", 1, OFFSET_BEGINNING),
        TopicPartition("a", 2, 5),
        TopicPartition("down", 0, OFFSET_END),
    ]
    out = resolve(tps, watermarks)
    # a failed lookup leaves the start to librdkafka: committed, else earliest (never skips)
    assert [tp.offset for tp in out] == [9, 3, 5, OFFSET_INVALID]
