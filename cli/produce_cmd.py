"""``rmqcompat produce``: send one message with the SDK producer (parse and delegate)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from rmqcompat.cli import context
from rmqcompat.cli.callbacks import parsed_by
from rmqcompat.cli.output import emit_json, iso
from rmqcompat.clock import epoch_ms
from rmqcompat.dlq.filters import parse_future_time
from rmqcompat.message import Message
from rmqcompat.producer import DefaultMQProducer


def _pairs(_ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for value in values:
        name, sep, text = value.partition("=")
        if not sep or not name:
            raise click.BadParameter(f"{value!r} is not NAME=VALUE")
        out[name] = text
    return out


_deliver_time = parsed_by(lambda value: parse_future_time(value, epoch_ms()))


def _body(body: str | None, body_file: Path | None) -> bytes:
    if body is not None and body_file is not None:
        raise click.UsageError("give the body once: --body, --body-file or stdin")
    if body is not None:
        return body.encode("utf-8")
    if body_file is not None:
        return body_file.read_bytes()
    if sys.stdin.isatty():
        raise click.UsageError("no body: pass --body TEXT, --body-file FILE or pipe it on stdin")
    return sys.stdin.buffer.read()


@click.command(name="produce")
@click.option("--topic", required=True, help="Logical topic.")
@click.option("--body", help="Message body as text (else --body-file, else stdin).")
@click.option(
    "--body-file", type=click.Path(exists=True, dir_okay=False, path_type=Path), help="Body file."
)
@click.option("--tag", help="The message's tag.")
@click.option("--key", "keys", multiple=True, help="A message key (repeatable).")
@click.option(
    "--property",
    "properties",
    multiple=True,
    callback=_pairs,
    metavar="NAME=VALUE",
    help="A user property (repeatable).",
)
@click.option("--sharding-key", help="Kafka key: equal keys land on the same partition.")
@click.option("--delay-level", type=click.IntRange(min=0), default=0, help="Delay level (1..N).")
@click.option(
    "--deliver-time",
    callback=_deliver_time,
    help="Timer message: deliver at this ISO time, or after an interval such as 10m.",
)
@click.option("--group", default="rmqcompat-cli", show_default=True, help="Producer group.")
@click.option("--json", "as_json", is_flag=True, help="Print the send result as JSON.")
def produce(
    topic: str,
    body: str | None,
    body_file: Path | None,
    tag: str | None,
    keys: tuple[str, ...],
    properties: dict[str, str],
    sharding_key: str | None,
    delay_level: int,
    deliver_time: int | None,
    group: str,
    as_json: bool,
) -> None:
    """Send one message and print where it landed; exit 1 if it was not delivered.

    \b
    Examples:
      rmqcompat produce --topic Orders --tag TagA --key order-1 --body '{"id": 1}'
      echo hello | rmqcompat produce --topic Orders --delay-level 3
      rmqcompat produce --topic Orders --deliver-time 10m --body-file order.json
    """
    ctx = context.current()
    config = ctx.client_config()
    message = Message(
        topic,
        _body(body, body_file),
        tags=tag,
        keys=list(keys) or None,
        properties=properties,
        delay_time_level=delay_level,
        deliver_time_ms=deliver_time,
    )
    producer = DefaultMQProducer(
        group,
        config.bootstrap_servers,
        namespace=config.namespace,
        kafka_config=config.kafka_config,
        spool_resend_interval_s=None,
    )
    with producer:  # a failed send raises SendError: one line, exit 1
        result = producer.send(message, sharding_key)
    row = {
        "status": result.send_status.value,
        "msg_id": result.msg_id,
        "offset_msg_id": result.offset_msg_id,
        "queue_id": result.message_queue.queue_id if result.message_queue else None,
        "queue_offset": result.queue_offset,
        "deliver_at": iso(deliver_time),
    }
    if as_json:
        emit_json(row)
    else:
        click.echo(" ".join(f"{name}={value}" for name, value in row.items() if value is not None))
    if not result.delivered:
        raise SystemExit(1)
