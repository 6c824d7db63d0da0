"""RocketMQ property names and the one codec between properties and Kafka headers.

Properties travel as Kafka headers under their RocketMQ names, values UTF-8 text;
numbers are decimal text. Decoding failures raise :class:`MalformedHeaderError`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from rmqcompat.core import CORE
from rmqcompat.errors import MalformedHeaderError

KEYS = "KEYS"
TAGS = "TAGS"
DELAY = "DELAY"
#: RocketMQ 5's message group (FIFO): set on the message, never by rmqcompat's 4.x API.
SHARDING_KEY = "__SHARDINGKEY"
RETRY_TOPIC = "RETRY_TOPIC"
REAL_TOPIC = "REAL_TOPIC"
REAL_QID = "REAL_QID"
ORIGIN_MESSAGE_ID = "ORIGIN_MESSAGE_ID"
RECONSUME_TIME = "RECONSUME_TIME"
MAX_RECONSUME_TIMES = "MAX_RECONSUME_TIMES"
UNIQ_KEY = "UNIQ_KEY"
CONSUME_START_TIME = "CONSUME_START_TIME"
TRAN_MSG = "TRAN_MSG"
PGROUP = "PGROUP"
#: RocketMQ 5 timer messages: absolute delivery time in epoch milliseconds.
TIMER_DELIVER_MS = "TIMER_DELIVER_MS"
#: What RocketMQ's timer adds to a delivered timer message (epoch milliseconds): when it
#: was first parked, when it was released, and the delivery time it was released for.
TIMER_ENQUEUE_MS = "TIMER_ENQUEUE_MS"
TIMER_DEQUEUE_MS = "TIMER_DEQUEUE_MS"
TIMER_OUT_MS = "TIMER_OUT_MS"

# rmqcompat's own properties (RocketMQ keeps these in the message header fields).
FLAG = "FLAG"
BORN_TIMESTAMP = "BORN_TIMESTAMP"
#: Epoch milliseconds at which a parked message is due; written when it is parked.
DUE_TIME = "DUE_TIME"
#: Why the forwarder quarantined a record.
QUARANTINE_REASON = "QUARANTINE_REASON"
#: Set by ``dlq replay`` only: the replay's ledger id, and its epoch milliseconds.
REPLAY_ID = "REPLAY_ID"
REPLAY_TIME = "REPLAY_TIME"

#: Properties of one delivery of a message, dropped when it is sent again (sent back for
#: a retry, or replayed from its dead letter): where it was parked and due, where the
#: forwarder read it, its timer's times, when its listener call started.
TRANSIENT = (
    DUE_TIME,
    DELAY,
    REAL_TOPIC,
    REAL_QID,
    TIMER_DELIVER_MS,
    TIMER_ENQUEUE_MS,
    TIMER_DEQUEUE_MS,
    TIMER_OUT_MS,
    CONSUME_START_TIME,
)

KEY_SEPARATOR = " "

#: Kafka headers as records carry them (``OutgoingRecord.headers``; None = no value).
Headers = list[tuple[str, bytes | None]]

# ASCII digits only: int() alone would also take " 7", "1_000" and non-ASCII digits.
_DECIMAL = re.compile(r"[+-]?[0-9]+")
#: Java's int and long ranges (RocketMQ's reconsume count is an int, times are longs).
JAVA_INT_MAX = 2**31 - 1
JAVA_LONG_MAX = 2**63 - 1
# more significant digits than any 64-bit value has: clamp without int() (which refuses
# more than 4300 digits, and is slow long before that)
_MAX_DIGITS = len(str(JAVA_LONG_MAX))
#: Reconsume counts are read into this range (a message never failed fewer than 0 times).
RECONSUME_TIMES_RANGE = (0, JAVA_INT_MAX)


def encode_int(value: int) -> str:
    return str(int(value))


def decode_int(properties: Mapping[str, str], name: str, default: int | None = None) -> int:
    """Read a decimal integer property.

    Raises:
        MalformedHeaderError: the property is missing (and no default) or not an integer.
    """
    text = properties.get(name)
    if text is None:
        if default is None:
            raise MalformedHeaderError(f"header {name} is missing")
        return default
    if not _DECIMAL.fullmatch(text):
        raise MalformedHeaderError(f"header {name}={text!r} is not a decimal integer")
    return int(text, 10)


def plain_digits(text: str) -> int | None:
    """``text``'s value when it is plain ASCII digits, at most as many as a Java long has
    (no sign, no ``_``, not empty), else None: the common case of every decimal property
    read, decided without the regular expression."""
    if text.isascii() and text.isdigit() and len(text) <= _MAX_DIGITS:
        return int(text)
    return None


def decode_clamped(
    properties: Mapping[str, str], name: str, low: int, high: int, default: int
) -> tuple[int, str | None]:
    """Read a decimal integer property, clamped into ``low..high``.

    Returns the value (``default`` when absent) and, when it was clamped, why (for the
    log); a well-formed number out of range is never an error.

    Raises:
        MalformedHeaderError: the property is not a decimal integer.
    """
    text = properties.get(name)
    if text is None:
        return default, None
    value = plain_digits(text)  # the common case
    if value is None:
        if not _DECIMAL.fullmatch(text):
            raise MalformedHeaderError(f"header {name}={text[:40]!r} is not a decimal integer")
        if len(text.lstrip("+-").lstrip("0")) > _MAX_DIGITS:  # beyond any bound we use
            value = low - 1 if text.startswith("-") else high + 1
        else:
            value = int(text, 10)
    if low <= value <= high:
        return value, None
    clamped = min(max(value, low), high)
    return clamped, f"header {name}={text[:40]!r} is outside {low}..{high}; read as {clamped}"


def clamp_reconsume_times(value: int) -> int:
    """``value`` moved into :data:`RECONSUME_TIMES_RANGE`."""
    low, high = RECONSUME_TIMES_RANGE
    return min(max(value, low), high)


def encode_properties(properties: Mapping[str, str]) -> Headers:
    """Encode properties as Kafka headers (UTF-8 values, one header per property, in the
    mapping's order). The pure-Python reference of the core's ``to_headers``
    (``tests/unit/test_core_parity.py``); call :data:`to_headers`."""
    return [(name, value.encode("utf-8")) for name, value in properties.items()]


#: :func:`encode_properties`, compiled where the core is built: every send-back, parked
#: or hopping record and every produce with user properties encodes its properties so.
to_headers: Callable[[Mapping[str, str]], Headers] = (
    encode_properties if CORE is None else CORE.to_headers
)


def from_headers(headers: Sequence[tuple[str, bytes | None]] | None) -> dict[str, str]:
    """Decode Kafka headers into properties.

    Raises:
        MalformedHeaderError: a header has no value, a value is not UTF-8, or a name repeats
            (RocketMQ properties are a map, so a repeated name is ambiguous).
    """
    properties: dict[str, str] = {}
    for name, value in headers or ():
        if value is None:
            raise MalformedHeaderError(f"header {name} has no value")
        if name in properties:
            raise MalformedHeaderError(f"header {name} appears more than once")
        try:
            properties[name] = value.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise MalformedHeaderError(f"header {name} is not UTF-8 text: {exc}") from None
    return properties


def join_keys(keys: str | Iterable[str] | None) -> str | None:
    """RocketMQ stores several keys in one property, separated by a space."""
    if keys is None or isinstance(keys, str):
        return keys
    return KEY_SEPARATOR.join(keys)
