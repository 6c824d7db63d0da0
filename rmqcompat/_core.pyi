# The compiled core's interface (native/src/lib.rs); rmqcompat.core says when it is used.

from collections.abc import Collection, Sequence

from rmqcompat.message import MessageExt

def decode_headers(headers: object) -> dict[str, str] | None: ...
def consume_events(
    head: bytes,
    ok: bytes,
    bad: bytes,
    msgs: Sequence[MessageExt],
    failed: Collection[int],
    reconsumes: Sequence[int] | None,
) -> list[bytes]: ...
def pack_events(
    events: Sequence[bytes], header: bytes, max_events: int, max_bytes: int
) -> list[tuple[bytes, int]]: ...
