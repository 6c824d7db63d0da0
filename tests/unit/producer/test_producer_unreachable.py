"""Retry, spool and fatal paths against an address where nothing listens (no broker needed).

Every send times out there, which is exactly the retriable condition of an unreachable or
frozen broker: retries run out, then the message comes back inside the exception or lands
in the spool, and every future/callback gets exactly one outcome.
"""

from __future__ import annotations

import threading

import pytest

from rmqcompat import properties as props
from rmqcompat.devbroker import free_port
from rmqcompat.errors import FatalSendError, RetriableSendError
from rmqcompat.message import Message
from rmqcompat.producer import Backoff, DefaultMQProducer, SendStatus, Spool


@pytest.fixture
def nowhere() -> str:
    return f"127.0.0.1:{free_port()}"


def producer(bootstrap: str, **kwargs: object) -> DefaultMQProducer:
    kwargs.setdefault("send_msg_timeout", 300)
    kwargs.setdefault("backoff", Backoff(initial_s=0.01, max_s=0.02))
    kwargs.setdefault("kafka_config", {"log_level": 0})
    kwargs.setdefault("connect_on_start", False)  # the point is to send while unreachable
    return DefaultMQProducer("PG", bootstrap, **kwargs)  # type: ignore[arg-type]


def test_async_send_retries_then_hands_the_message_back(nowhere):
    outcomes: list[object] = []
    msg = Message("T", b"payload")
    with producer(nowhere, retry_times_when_send_async_failed=1) as p:
        future = p.send_async(msg, callback=outcomes.append)
        exc = future.exception()
    assert isinstance(exc, RetriableSendError)
    assert exc.message is msg
    assert exc.attempts == 2
    assert exc.code == "_MSG_TIMED_OUT"
    assert outcomes == [exc]


def test_sync_send_gives_up_when_its_overall_timeout_is_spent(nowhere):
    with producer(nowhere, retry_times_when_send_failed=5) as p:
        with pytest.raises(RetriableSendError) as info:
            p.send(Message("T", b"x"))
    # one librdkafka attempt uses the whole send_msg_timeout: no time for a second
    assert info.value.attempts == 1


def test_retriable_final_failure_is_spooled_with_its_id_and_reported_as_spooled(nowhere, tmp_path):
    outcomes: list[object] = []
    with producer(nowhere, spool_dir=str(tmp_path), retry_times_when_send_async_failed=1) as p:
        sync = p.send(Message("T", b"sync"))
        future = p.send_async(Message("T", b"async", tags="A"), callback=outcomes.append)
        p.send_oneway(Message("T", b"oneway"))
        asynchronous = future.result()
    assert sync.send_status is SendStatus.SPOOLED
    assert not sync.delivered
    assert asynchronous.send_status is SendStatus.SPOOLED
    assert outcomes == [asynchronous]
    entries = {e.msg_id: e for e in Spool(tmp_path).list()}
    assert len(entries) == 3  # the oneway send was spooled too, not dropped
    spooled = entries[asynchronous.msg_id]
    assert spooled.record.value == b"async"
    assert props.from_headers(spooled.record.headers)[props.UNIQ_KEY] == asynchronous.msg_id
    assert spooled.code == "_MSG_TIMED_OUT"
    assert spooled.attempts == 2
    assert asynchronous.spool_path is not None
    assert asynchronous.spool_path.endswith(spooled.name)


def test_failed_resend_keeps_the_entry_and_never_spools_it_twice(nowhere, tmp_path):
    with producer(nowhere, spool_dir=str(tmp_path), retry_times_when_send_async_failed=0) as p:
        p.send(Message("T", b"x"))
        assert p.resend_spooled() == (0, 1)
    assert len(Spool(tmp_path)) == 1


def test_fatal_error_is_raised_at_once_without_retries(nowhere, tmp_path):
    # librdkafka refuses a record above its message.max.bytes locally: not retriable,
    # so never spooled either.
    config = {"log_level": 0, "message.max.bytes": 1000}
    with producer(nowhere, spool_dir=str(tmp_path), kafka_config=config) as p:
        with pytest.raises(FatalSendError) as info:
            p.send(Message("T", b"x" * 2000))
        future = p.send_async(Message("T", b"x" * 2000))
        assert isinstance(future.exception(), FatalSendError)
    assert info.value.attempts == 1
    assert info.value.code == "MSG_SIZE_TOO_LARGE"
    assert len(Spool(tmp_path)) == 0


def test_shutdown_waits_for_every_pending_outcome(nowhere):
    count = 20
    fired = threading.Semaphore(0)
    calls: list[object] = []

    def callback(outcome: object) -> None:
        calls.append(outcome)
        fired.release()

    p = producer(nowhere, retry_times_when_send_async_failed=1)
    p.start()
    futures = [p.send_async(Message("T", b"x"), callback=callback) for _ in range(count)]
    p.shutdown()
    assert all(f.done() for f in futures)
    assert len(calls) == count
    assert all(isinstance(c, RetriableSendError) for c in calls)
