"""``rmqcompat msg show``: one message by id, looked up across a topic's partitions."""

from __future__ import annotations

import click

from rmqcompat.cli import context
from rmqcompat.cli.consume_cmd import message_row
from rmqcompat.cli.inspect import NotFoundError, find_message
from rmqcompat.cli.output import emit_json
from rmqcompat.reachability import require_broker
from rmqcompat.topics.naming import to_kafka_topic


@click.group(name="msg")
def msg() -> None:
    """Look up messages.

    \b
    Example:
      rmqcompat msg show --topic Orders --msg-id 7F0000011F9C2A3B0000000100000002
    """


@msg.command(name="show")
@click.option("--topic", required=True, help="Logical topic (%RETRY%G and %DLQ%G too).")
@click.option("--msg-id", required=True, help="Message id (UNIQ_KEY) or storage id T@P@O.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def show(topic: str, msg_id: str, as_json: bool) -> None:
    """Every record of the topic carrying the message id, with all its properties.

    Reads each partition from its start to its end now; exit 1 if none matches.

    \b
    Example:
      rmqcompat msg show --topic %DLQ%order_consumer --msg-id 7F00...02 --json
    """
    config = context.current().client_config()
    physical = to_kafka_topic(topic, config.namespace)
    require_broker(config)
    found = [message_row(m, preview=2000) for m in find_message(config, physical, msg_id)]
    if not found:
        raise NotFoundError(f"no message {msg_id} in {topic} ({physical})")
    if as_json:
        emit_json({"messages": found})
        return
    for row in found:
        for name, value in row.items():
            click.echo(f"{name}: {value}")
        click.echo("")
