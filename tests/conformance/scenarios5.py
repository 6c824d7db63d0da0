"""The 5.x scenarios: SimpleConsumer (receive, ack, invisible time, change of it, attempts
to ``%DLQ%``), PushConsumer (failures, backoff, ``%DLQ%``), FIFO message groups, a
delivery time and a tag filter, each run with the same application code (``driver5.py``)
on RocketMQ's proxy and on rmqcompat.v5. docs/conformance.md lists them with their
expected differences."""

from __future__ import annotations

from scenario import EXCEPTION, LATER, SUCCESS, Expected, Reply, Scenario, Send

#: RocketMQ's broker revives a message whose invisible time is over only once that time is
#: more than 2 s old (PopReviveService: ackTimeInterval + 1 s, fixed); measured 2.0-2.3 s
#: late on a quiet machine, up to 4.5 s on a loaded one. rmqcompat redelivers a push
#: consumer's failure at its backoff, so RocketMQ's gap is 2-4.5 s longer (less 0.8 s for
#: timing noise); a wait one level off (4 s) still shows.
_PUSH_REVIVE_LAG = Expected(
    "*.deliveries.*.gap_s",
    "RocketMQ's revive lag (2-4.5 s after the backoff); rmqcompat redelivers at the backoff",
    lead_s=(1.2, 4.8),
)
#: ... and an expired SimpleConsumer message one shortest delay level (1 s) after its
#: invisible time: RocketMQ's gap is 1-3.5 s longer.
_SIMPLE_REVIVE_LAG = Expected(
    "*.deliveries.*.gap_s",
    "RocketMQ's revive lag (2-4.5 s after the invisible time); rmqcompat's is one shortest "
    "delay level (1 s)",
    lead_s=(0.2, 3.8),
)
#: rocketmq-python-client 5.1.2 retries a FIFO failure in place with the same message
#: object: its delivery_attempt stays 1 on every try. rmqcompat counts each try.
_FIFO_IN_PLACE_ATTEMPTS = (
    Expected(
        "a1.deliveries.*.delivery_attempt",
        "kept on purpose: rmqcompat counts a FIFO message's in-place retries (2, 3, ...); "
        "the 5.1.2 Python client shows 1 on every try",
    ),
    Expected("a1.deliveries.*.reconsume_times", "the delivery attempt minus one (above)"),
)
#: RocketMQ 5.5.0 pops a FIFO queue for a SimpleConsumer under a lock on the whole queue:
#: while a1 is received and not acked, nothing else of that queue comes, whatever its group.
_SIMPLE_FIFO_HOLDS_THE_QUEUE = Expected(
    "b1.first_s",
    "kept on purpose: on RocketMQ a SimpleConsumer's unacked FIFO message holds its whole "
    "queue (b1 of group B comes after a1's ack); rmqcompat holds only its message group",
)


def _v5(name: str, messages: tuple[Send, ...], **settings: object) -> Scenario:
    return Scenario(name, messages, api="5.x", **settings)  # type: ignore[arg-type]


def _attempts_to_dlq(name: str, consumer: str, lag: Expected) -> Scenario:
    """A message that fails every attempt (2): a SimpleConsumer lets its invisible time
    (2 s) end, a PushConsumer returns FAILURE."""
    return _v5(
        name,
        (Send("k1", properties={"user": "u1"}),),
        replies={"k1": (LATER,)},
        consumer=consumer,
        invisible_s=2,
        max_attempts=2,
        quiet_ms=9000,
        expected=(lag,),
    )


SIMPLE = (
    _v5(
        "v5_simple_receive_ack",
        (Send("k1", properties={"user": "u1"}), Send("k2", tags="TagB")),
        consumer="simple",
    ),
    _v5(
        "v5_simple_invisible_expiry",
        (Send("k1", properties={"user": "u1"}),),
        replies={"k1": (LATER, LATER, SUCCESS)},
        consumer="simple",
        invisible_s=2,
        quiet_ms=7000,
        expected=(_SIMPLE_REVIVE_LAG,),
    ),
    _v5(
        "v5_simple_change_invisible_duration",
        (Send("k1"),),
        replies={"k1": (Reply("later", invisible_s=5), SUCCESS)},
        consumer="simple",
        invisible_s=2,
        quiet_ms=10000,
        expected=(_SIMPLE_REVIVE_LAG,),
    ),
    _attempts_to_dlq("v5_simple_attempts_to_dlq", "simple", _SIMPLE_REVIVE_LAG),
)

PUSH = (
    _v5(
        "v5_push_failure_backoff",
        (Send("k1", properties={"user": "u1"}),),
        replies={"k1": (LATER, EXCEPTION, SUCCESS)},
        quiet_ms=11000,
        expected=(_PUSH_REVIVE_LAG,),
    ),
    _attempts_to_dlq("v5_push_attempts_to_dlq", "push", _PUSH_REVIVE_LAG),
)

FIFO = (
    _v5(
        "v5_fifo_push_failure_holds_its_group",
        (
            Send("a1", message_group="A"),
            Send("a2", message_group="A"),
            Send("b1", message_group="B"),
            Send("b2", message_group="B"),
        ),
        replies={"a1": (LATER, LATER, SUCCESS)},
        fifo=True,
        quiet_ms=6000,
        expected=_FIFO_IN_PLACE_ATTEMPTS,
    ),
    _v5(
        "v5_fifo_simple_next_after_ack",
        (
            Send("a1", message_group="A"),
            Send("a2", message_group="A"),
            Send("b1", message_group="B"),
        ),
        replies={"a1": (LATER, SUCCESS)},
        consumer="simple",
        invisible_s=2,
        fifo=True,
        quiet_ms=6000,
        expected=(_SIMPLE_FIFO_HOLDS_THE_QUEUE,),
    ),
    _v5(
        "v5_fifo_push_attempts_to_dlq",
        (Send("a1", message_group="A"), Send("a2", message_group="A")),
        replies={"a1": (LATER,)},
        fifo=True,
        max_attempts=3,
        quiet_ms=6000,
        expected=_FIFO_IN_PLACE_ATTEMPTS,
    ),
)

OTHER = (
    _v5(
        "v5_delivery_timestamp",
        (Send("k1", deliver_after_ms=4000),),
        consumer_first=True,
    ),
    _v5(
        "v5_tag_filter",
        (Send("k1", tags="TagA"), Send("k2", tags="TagB"), Send("k3", tags="TagC")),
        replies={"k3": (LATER, SUCCESS)},
        subscription="TagA || TagC",
        expected=(_PUSH_REVIVE_LAG,),
    ),
)

ALL5 = SIMPLE + PUSH + FIFO + OTHER
