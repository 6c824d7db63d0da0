"""The poll thread survives what it can and reports what it cannot; listeners cannot
corrupt the consumer's bookkeeping."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException
from consumer_fixtures import consumer_env  # noqa: F401
from consumer_helpers import OK, Recorder
from waiting import wait_until

from rmqcompat.consumer import ConsumerFailedError, push_consumer
from rmqcompat.consumer.membership import Membership
from rmqcompat.errors import RmqCompatError


def test_a_listener_that_empties_its_list_still_gets_its_messages_committed(env):
    env.produce([{} for _ in range(5)])
    calls = []

    def drain(msgs, ctx):
        while msgs:  # a common idiom; RocketMQ hands out an unmodifiable list
            calls.append(msgs.pop())
        return OK

    with env.consumer(drain, consume_message_batch_max_size=2):
        wait_until(lambda: env.offset() == 5, what="commit past every message")
    assert len(calls) == 5


class _FlakyCommitted(Consumer):
    """committed() times out once, as it does against a slow group coordinator."""

    failures = 1

    def committed(self, *args, **kwargs):
        if _FlakyCommitted.failures:
            _FlakyCommitted.failures -= 1
            raise KafkaException(KafkaError(KafkaError._TIMED_OUT, "committed() timed out"))
        return super().committed(*args, **kwargs)


def test_a_failed_start_lookup_in_the_assign_callback_is_retried(env, monkeypatch):
    monkeypatch.setattr(push_consumer, "Consumer", _FlakyCommitted)
    ids = env.produce([{} for _ in range(3)])
    rec = Recorder()
    with env.consumer(rec) as consumer:
        wait_until(lambda: sorted(rec.ids()) == sorted(ids), what="every message")
        assert consumer.healthy()
    assert _FlakyCommitted.failures == 0


class _FailingConsume(Consumer):
    """The next poll() or consume() raises what a test puts in ``raise_next`` (once)."""

    raise_next: KafkaException | None = None

    @staticmethod
    def _raise_pending() -> None:
        error, _FailingConsume.raise_next = _FailingConsume.raise_next, None
        if error is not None:
            raise error

    def poll(self, *args, **kwargs):
        self._raise_pending()
        return super().poll(*args, **kwargs)

    def consume(self, *args, **kwargs):
        self._raise_pending()
        return super().consume(*args, **kwargs)


def test_poll_errors_are_survived_and_a_fatal_one_is_reported_by_healthy_and_shutdown(
    env, monkeypatch
):
    monkeypatch.setattr(push_consumer, "Consumer", _FailingConsume)
    rec = Recorder()
    consumer = env.consumer(rec)
    consumer.start()
    try:
        wait_until(consumer.healthy, what="started")
        transient = KafkaError(KafkaError._TRANSPORT, "broker connection lost")
        _FailingConsume.raise_next = KafkaException(transient)
        wait_until(lambda: _FailingConsume.raise_next is None, what="the transient error")
        ids = env.produce([{}])
        wait_until(lambda: rec.ids() == ids, what="consumption after the transient error")
        assert consumer.healthy()
        fatal = KafkaException(KafkaError(KafkaError._FATAL, "fenced", fatal=True))
        _FailingConsume.raise_next = fatal
        wait_until(lambda: not consumer.healthy(), what="the poll thread to stop")
    finally:
        with pytest.raises(ConsumerFailedError) as failed:
            consumer.shutdown()
    assert isinstance(failed.value, RmqCompatError)
    assert failed.value.__cause__ is fatal


def test_an_assign_callback_that_raises_anyway_leaves_a_consumer_that_still_consumes(
    env, monkeypatch
):
    # confluent-kafka assigns the partitions itself when the callback raised; before, the
    # error killed the poll thread (and the consumer still claimed to be started)
    original, calls = Membership.on_assign, []

    def flaky(self, consumer, tps):
        calls.append(tps)
        if len(calls) == 1:
            raise KafkaException(KafkaError(KafkaError._TIMED_OUT, "committed() timed out"))
        return original(self, consumer, tps)

    monkeypatch.setattr(Membership, "on_assign", flaky)
    ids = env.produce([{} for _ in range(3)])
    rec = Recorder()
    with env.consumer(rec) as consumer:
        wait_until(lambda: sorted(rec.ids()) == sorted(ids), what="every message")
        wait_until(lambda: env.offset() == 3, what="the commit")
        assert consumer.healthy()
