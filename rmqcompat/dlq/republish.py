"""The record a replay sends for a dead letter (pure): where it goes, what headers it carries.

Default target ``retry``: ``%RETRY%<group>``, so only the failing group consumes it again;
``RETRY_TOPIC`` names the original topic, which is the topic the group's consumer shows
(RocketMQ's retry-topic reset, :func:`rmqcompat.consumer.inbound.reset_retry_topic`).
Target ``original``: the original topic, for every group subscribed to it.

Either way the message starts over: ``RECONSUME_TIME`` is 0, the properties of its last
trip (``MAX_RECONSUME_TIMES``, parking, delivery) are dropped, it gets a new message id
(``UNIQ_KEY``) while ``ORIGIN_MESSAGE_ID`` keeps the first one, and ``REPLAY_ID`` /
``REPLAY_TIME`` name the replay (its ledger entry). Body, key, and every other header
(tags, keys, born time, user properties) are kept byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from operator import itemgetter
from typing import Literal

from rmqcompat import properties as props
from rmqcompat.dlq.model import DeadLetter, HeaderLayout, RawHeaders
from rmqcompat.errors import ConfigError, InvalidNameError
from rmqcompat.properties import REPLAY_ID, REPLAY_TIME
from rmqcompat.topics.naming import retry_topic, validate_topic

Target = Literal["retry", "original"]
TARGETS: tuple[Target, ...] = ("retry", "original")

_DROPPED = (
    props.MAX_RECONSUME_TIMES,
    props.DUE_TIME,
    props.DELAY,
    props.REAL_TOPIC,
    props.REAL_QID,
    props.TIMER_DELIVER_MS,
    props.CONSUME_START_TIME,
)
_REPLACED = frozenset({*_DROPPED, props.UNIQ_KEY, props.RECONSUME_TIME, REPLAY_ID, REPLAY_TIME})
_REPLACED_ORIGINAL = _REPLACED | {props.RETRY_TOPIC}


def replay_topic(letter: DeadLetter, target: Target) -> str:
    """The logical topic the replay of ``letter`` goes to.

    Raises:
        ConfigError: the dead letter does not say its original topic (no ``RETRY_TOPIC``),
            or names an illegal one.
    """
    try:
        return _destination(letter.group, letter.original_topic, target)
    except InvalidNameError as exc:
        raise ConfigError(
            f"dead letter {letter.dlq_id} has no usable original topic ({props.RETRY_TOPIC}: "
            f"{exc}); it cannot be replayed"
        ) from None


@lru_cache(maxsize=1024)  # a replay asks for the same one or few topics thousands of times
def _destination(group: str, original: str, target: Target) -> str:
    validate_topic(original)
    return retry_topic(group) if target == "retry" else original


Header = tuple[str, bytes | None]


def replay_stamp(when_ms: int) -> tuple[Header, ...]:
    """The headers every record of one replay transaction shares: the reconsume count
    reset to 0 and ``REPLAY_TIME``. Built once per transaction."""
    return ((props.RECONSUME_TIME, b"0"), (REPLAY_TIME, props.encode_int(when_ms).encode()))


def replay_headers(
    letter: DeadLetter,
    target: Target,
    new_msg_id: str,
    replay_id: str,
    stamp: tuple[Header, ...],
) -> list[Header]:
    """The headers of the record that replays ``letter`` (see the module's docstring);
    ``stamp`` is :func:`replay_stamp` of the replay's time."""
    layout = letter.layout
    # the other headers go as they are, byte for byte (user properties included)
    headers = [*_kept(layout, target)(letter.headers)]
    if props.ORIGIN_MESSAGE_ID not in layout.first:
        headers.append((props.ORIGIN_MESSAGE_ID, letter.msg_id.encode()))
    if props.BORN_TIMESTAMP not in layout.first:
        headers.append((props.BORN_TIMESTAMP, props.encode_int(letter.born_ms).encode()))
    headers += ((props.UNIQ_KEY, new_msg_id.encode()), (REPLAY_ID, replay_id.encode()), *stamp)
    return headers


def replaced_names(target: Target) -> frozenset[str]:
    """The header names a replay to ``target`` does not send as they are: it drops or
    writes them anew (see the module's docstring)."""
    return _REPLACED_ORIGINAL if target == "original" else _REPLACED


@lru_cache(maxsize=4096)  # one or a few layouts per replay, each asked for per dead letter
def _kept(layout: HeaderLayout, target: Target) -> Callable[[RawHeaders], Sequence[Header]]:
    """Picks, from headers laid out as ``layout``, those a replay to ``target`` sends as
    they are, in their order (one C call for the usual two or more)."""
    replaced = replaced_names(target)
    keep = [i for i, name in enumerate(layout.names) if name not in replaced]
    if len(keep) > 1:
        return itemgetter(*keep)
    return lambda headers: tuple(headers[i] for i in keep)
