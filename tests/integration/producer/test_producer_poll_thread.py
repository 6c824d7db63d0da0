"""No exception in a delivery report may end the producer's poll thread (sends would hang)."""

from __future__ import annotations

import threading

import pytest
from producer_helpers import GIVE_UP_S, create_topic, read_to_eof
from test_producer_spool_resend import spooled

from rmqcompat.message import Message
from rmqcompat.producer import DefaultMQProducer, SendStatus, Spool, SpoolEntry
from rmqcompat.topics.naming import to_kafka_topic


def _in_thread(call):
    # Safety net only: without the fix the call never returns (its outcome is never set).
    box: list[object] = []
    worker = threading.Thread(target=lambda: box.append(call()), daemon=True)
    worker.start()
    worker.join(GIVE_UP_S)
    assert not worker.is_alive(), "the call hung: the producer's poll thread died"
    return box[0]


@pytest.mark.parametrize(
    "failure", [OSError("read-only spool"), RuntimeError("spool bug")], ids=["oserror", "bug"]
)
def test_failing_spool_removal_neither_fails_the_resend_nor_kills_the_poll_thread(
    failure, kafka_bootstrap, namespace, client_overrides, unique_name, tmp_path, monkeypatch
):
    topic = unique_name("T")
    create_topic(kafka_bootstrap, topic, namespace, partitions=1)
    physical = to_kafka_topic(topic, namespace)
    spool = Spool(tmp_path)
    spooled(spool, physical, 2)

    def refuse(self: Spool, entry: SpoolEntry) -> None:
        raise failure

    # Runs in the delivery report of each re-send, i.e. inside the poll thread's poll().
    monkeypatch.setattr(Spool, "remove", refuse)
    with DefaultMQProducer(
        "PG",
        kafka_bootstrap,
        namespace=namespace,
        kafka_config=client_overrides,
        spool_dir=str(tmp_path),
        spool_resend_interval_s=None,
    ) as producer:
        # Delivered, so reported as sent; the files stay (a later pass re-sends them:
        # at least once) because they could not be deleted.
        assert _in_thread(producer.resend_spooled) == (2, 0)
        result = _in_thread(lambda: producer.send(Message(topic, b"after")))
        assert result.send_status is SendStatus.SEND_OK
    assert len(spool) == 2
    assert [r.value() for r in read_to_eof(kafka_bootstrap, physical)][-1] == b"after"
