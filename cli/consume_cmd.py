"""``rmqcompat consume``: read messages as a consumer group, or peek without a group."""

from __future__ import annotations

import threading
import time
from typing import Any

import click

from rmqcompat.cli import context
from rmqcompat.cli.inspect import peek
from rmqcompat.cli.output import emit_json, emit_table, iso
from rmqcompat.consumer.listener import ConsumeConcurrentlyStatus, ConsumeFromWhere
from rmqcompat.consumer.push_consumer import DefaultMQPushConsumer
from rmqcompat.message import MessageExt
from rmqcompat.reachability import require_broker
from rmqcompat.topics.naming import to_kafka_topic, validate_topic

_COLUMNS = (
    "msg_id",
    "topic",
    "queue_id",
    "queue_offset",
    "tags",
    "keys",
    "reconsume_times",
    "born",
    "body",
)


def message_row(msg: MessageExt, preview: int = 60) -> dict[str, Any]:
    """A message as ``consume`` and ``msg show`` print it (JSON-ready)."""
    return {
        "msg_id": msg.msg_id,
        "topic": msg.topic,
        "queue_id": msg.queue_id,
        "queue_offset": msg.queue_offset,
        "tags": msg.tags,
        "keys": msg.keys,
        "reconsume_times": msg.reconsume_times,
        "born": iso(msg.born_timestamp),
        "stored": iso(msg.store_timestamp),
        "properties": msg.properties,
        "body": msg.body[:preview].decode("utf-8", "replace"),
    }


def emit_messages(messages: list[MessageExt], as_json: bool) -> None:
    rows = [message_row(msg) for msg in messages]
    if as_json:
        emit_json({"messages": rows})
    else:
        emit_table(_COLUMNS, [[row[c] for c in _COLUMNS] for row in rows])


class _Collector:
    """Listener that keeps every message it is handed and says when ``wanted`` came."""

    def __init__(self, wanted: int | None) -> None:
        self.messages: list[MessageExt] = []
        self.last_s = time.monotonic()
        self.enough = threading.Event()
        self._wanted = wanted
        self._lock = threading.Lock()

    def __call__(self, msgs: list[MessageExt], _ctx: Any) -> ConsumeConcurrentlyStatus:
        with self._lock:
            self.messages += msgs
            self.last_s = time.monotonic()
            if self._wanted is not None and len(self.messages) >= self._wanted:
                self.enough.set()
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS


@click.command(name="consume")
@click.option("--topic", required=True, help="Logical topic.")
@click.option("--group", help="Consume as this consumer group (commits its offsets).")
@click.option(
    "--peek", "peek_only", is_flag=True, help="Read without a group; nothing is committed."
)
@click.option("--tags", default="*", show_default=True, help="Tag expression (with --group).")
@click.option("--from-beginning", is_flag=True, help="Start at the oldest message.")
@click.option("--max", "limit", type=click.IntRange(min=1), default=10, show_default=True)
@click.option(
    "--idle",
    type=click.FloatRange(min=0.1),
    default=5.0,
    show_default=True,
    help="With --group: stop after this many seconds without a message.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def consume(
    topic: str,
    group: str | None,
    peek_only: bool,
    tags: str,
    from_beginning: bool,
    limit: int,
    idle: float,
    as_json: bool,
) -> None:
    """Print messages of a topic: as a group (each one consumed and committed) or peeked.

    --peek reads the last --max messages (or the first, with --from-beginning) and
    changes nothing. With --group, messages the listener was handed are all printed, so
    a batch may take the count a little past --max; nothing is consumed silently.

    \b
    Examples:
      rmqcompat consume --topic Orders --peek --max 5
      rmqcompat consume --topic Orders --group audit_reader --from-beginning --max 100
    """
    if (group is None) == (not peek_only):
        raise click.UsageError("give exactly one of --group and --peek")
    validate_topic(topic)
    config = context.current().client_config()
    require_broker(config)
    if peek_only:
        physical = to_kafka_topic(topic, config.namespace)
        emit_messages(peek(config, physical, limit, from_beginning), as_json)
        return
    assert group is not None
    collector = _Collector(limit)
    consumer = DefaultMQPushConsumer(
        group,
        config.bootstrap_servers,
        namespace=config.namespace,
        kafka_config=config.kafka_config,
        consume_from_where=ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET
        if from_beginning
        else ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET,
        consume_thread_max=1,
        consume_message_batch_max_size=1,
    )
    consumer.subscribe(topic, tags)
    consumer.register_message_listener(collector)
    with consumer:
        collector.last_s = time.monotonic()  # idle counts from the start, not construction
        while not collector.enough.wait(0.2):
            if time.monotonic() - collector.last_s > idle:
                break
    emit_messages(collector.messages, as_json)
