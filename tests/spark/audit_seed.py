"""A seeded scenario with known truth: trace events emitted through the sink API, and a
business topic with committed offsets (for the lag figure).

Group ``G`` on topic ``T`` (all published an hour before ``NOW_MS`` unless noted):

- m1: succeeds first time (group ``H`` succeeds it too);
- m2: fails, retried once (send-back to level 3 = 10 s, forwarded 5 ms late), succeeds;
- m3: fails twice; first retry after 10 s (forwarded 15 ms late), second retry
  forwarded 100 ms late, but delivered 61.1 s after the due time its send-back recorded
  (beyond the default ``late_ms`` of 60 s: a ladder violation);
- m4: dead-lettered, then replayed;  m5: discarded;  m6: sent back, still parked;
- m7: lost (nothing after the publish: its group committed past it);
- m8: delivered twice at reconsume 0 (a killed consumer's duplicate), succeeded;
- m9: published a second before ``NOW_MS``, not consumed yet: pending, not lost;
- m10: filtered by tag;
- m11: a scheduled message (delay level 3) not forwarded yet: parked.

Group ``H`` consumes only m1: m9 is pending and m11 parked for it, the other eight lost.
"""

from __future__ import annotations

from confluent_kafka import Consumer, Producer, TopicPartition
from waiting import wait_until

from rmqcompat.config import ClientConfig
from rmqcompat.message import MessageExt
from rmqcompat.topics.naming import retry_topic, to_kafka_topic
from rmqcompat.topics.provision import ensure_topics
from rmqcompat.topics.spec import TopicSpec
from rmqcompat.trace import Emitter, KafkaTraceSink, TraceRecord

G, H, T = "G", "H", "T"
NOW_MS = 1_900_000_000_000
T0 = NOW_MS - 3_600_000
TOPIC_RECORDS = 10
G_COMMITTED = 7

EXPECTED_G = {
    "produced": 11,
    "succeeded_first_time": 2,
    "retried_histogram": {"1": 1, "2": 1},
    "dead_lettered": 1,
    "discarded": 1,
    "replayed": 1,
    "parked": 2,
    "lost": 1,
    "duplicate_deliveries": 1,
    "filtered": 1,
    "pending": 1,
    "lateness_ms": {"p50": 15, "p99": 100, "max": 100},
    "ladder_violations": 1,
    "late_forwards": 0,
    "retries_judged": 3,
    "lag": TOPIC_RECORDS - G_COMMITTED,
}
EXPECTED_H = {
    "produced": 11,
    "succeeded_first_time": 1,
    "lost": 8,
    "pending": 1,
    "parked": 1,
    "lag": TOPIC_RECORDS,
}


class Clock:
    """The emitter's clock, set by the scenario."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> int:
        return self.now


def received(msg_id: str, reconsume: int = 0, tags: str = "a") -> MessageExt:
    return MessageExt(T, b"", msg_id, 0, int(msg_id[1:]), T0, T0, reconsume, {"TAGS": tags})


class Scenario:
    """Builds the events; :meth:`emit_to` sends them through a sink."""

    def __init__(self, namespace: str) -> None:
        self.clock = Clock()
        self.emitter = Emitter("test@1@seed", namespace, self.clock)
        self.other = Emitter("test@2@seed", namespace, self.clock)
        self.events: list[TraceRecord] = []
        self.namespace = namespace

    def at(self, ms: int) -> Scenario:
        self.clock.now = ms
        return self

    def add(self, event: TraceRecord) -> None:
        self.events.append(event)

    def publish(self, msg_id: str, at: int = T0) -> None:
        self.at(at).add(
            self.emitter.publish(msg_id, T, to_kafka_topic(T, self.namespace), tags="a")
        )

    def retry(
        self, msg_id: str, group: str, reconsume: int, start: int, interval: int, late: int
    ) -> None:
        """Delivery ``reconsume`` fails at ``start``, is sent back, forwarded ``late`` ms
        after its due time and delivered again ``interval`` ms after the send-back."""
        level = 3 + reconsume
        due = start + interval - late
        self.at(start).add(
            self.emitter.consume(received(msg_id, reconsume), group, "RECONSUME_LATER", 3)
        )
        self.at(start).add(
            self.emitter.send_back(received(msg_id, reconsume), group, level, due, "%SCHEDULE%10s")
        )
        self.at(due + late).add(
            self.emitter.forward(
                msg_id,
                T,
                retry_topic(group),
                "ns.rmq.delay.10s",
                0,
                1,
                due,
                reconsume_times=reconsume + 1,
                delay_level=level,
            )
        )

    def consume(
        self,
        msg_id: str,
        group: str,
        status: str = "SUCCESS",
        reconsume: int = 0,
        at: int = T0 + 1000,
    ) -> None:
        self.at(at).add(self.emitter.consume(received(msg_id, reconsume), group, status, 2))  # type: ignore[arg-type]

    def build(self) -> Scenario:
        for n in range(1, 11):
            self.publish(f"m{n}", NOW_MS - 1000 if n == 9 else T0)
        self.consume("m1", G)
        self.consume("m1", H)
        self.retry("m2", G, 0, T0 + 1000, 10_000, 5)
        self.consume("m2", G, reconsume=1, at=T0 + 11_000)
        self.retry("m3", G, 0, T0 + 1000, 10_000, 15)
        self.retry("m3", G, 1, T0 + 11_000, 2_000, 100)
        self.consume("m3", G, reconsume=2, at=T0 + 74_000)
        self.consume("m4", G, "EXCEPTION")
        self.at(T0 + 1001).add(
            self.emitter.dead_letter(received("m4"), G, "%DLQ%G", "max reconsume times 0")
        )
        self.at(T0 + 5000).add(
            self.emitter.replay("m4", G, T, "%RETRY%G", reason="rmqcompat dlq replay")
        )
        self.consume("m5", G, "RECONSUME_LATER")
        self.at(T0 + 1001).add(self.emitter.discard(received("m5"), G, "dead_letter=False"))
        self.consume("m6", G, "TIME_OUT")
        self.at(T0 + 1001).add(
            self.emitter.send_back(received("m6"), G, 3, NOW_MS + 10**9, "%SCHEDULE%10s")
        )
        self.consume("m8", G)
        self.at(T0 + 2000).add(self.other.consume(received("m8"), G, "SUCCESS", 2))
        self.at(T0 + 1000).add(self.emitter.filtered(received("m10", tags="zzz"), G))
        physical = to_kafka_topic(T, self.namespace)
        self.at(T0).add(self.emitter.publish("m11", T, physical, delay_level=3, due_ms=T0 + 10_000))
        return self

    def emit_to(self, sink: KafkaTraceSink) -> None:
        for event in self.events:
            sink.emit(event)


def write_events(
    client: ClientConfig,
    events: list[TraceRecord],
    garbage: list[bytes] = (),  # type: ignore[assignment]
    unencodable: int = 0,
) -> None:
    """Emit ``events`` through a real sink (and ``garbage`` as raw trace records); the
    sink drops ``unencodable`` events first (and counts them in the records it writes)."""
    sink = KafkaTraceSink(client)
    for _ in range(unencodable):
        sink.emit({"event": "NOT_A_TYPE", "msg_id": "x"})
    for event in events:
        sink.emit(event)
    sink.start()
    wait_until(lambda: sink.stats().written == len(events), 30)
    sink.close()
    if garbage:
        producer = Producer(client.librdkafka("producer"))
        for value in garbage:
            producer.produce(sink.topic, value)
        producer.flush(10)


def seed_topic_offsets(client: ClientConfig) -> None:
    """``T`` holds 10 records; group G committed 7 of them (H committed nothing)."""
    physical = to_kafka_topic(T, client.namespace)
    ensure_topics(client.librdkafka("admin"), {T: TopicSpec(partitions=1)}, client.namespace)
    producer = Producer(client.librdkafka("producer"))
    for n in range(TOPIC_RECORDS):
        producer.produce(physical, b"x%d" % n)
        # one record per batch: Tansu 0.6.0 advances the high watermark by one for a
        # whole multi-record batch (10 records batched -> high watermark 1)
        producer.flush(10)
    consumer = Consumer(client.librdkafka("consumer", **{"group.id": f"{client.namespace}%{G}"}))
    consumer.commit(offsets=[TopicPartition(physical, 0, G_COMMITTED)], asynchronous=False)
    consumer.close()
