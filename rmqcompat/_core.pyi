# The compiled core's interface (native/src/lib.rs); rmqcompat.core says when it is used.
# Each function has exactly the signature of its pure-Python reference.

from collections.abc import Sequence

from confluent_kafka import KafkaError

from rmqcompat.callbacks import bound_call as bound_call
from rmqcompat.consumer.dispatch import BatchRunner as BatchRunner
from rmqcompat.consumer.dispatch import ConsumeBatch as ConsumeBatch
from rmqcompat.consumer.dispatch import add_batches as add_batches
from rmqcompat.consumer.intake import accept_run as accept_run
from rmqcompat.consumer.listener import ConsumeConcurrentlyContext as ConsumeConcurrentlyContext
from rmqcompat.consumer.settlement import settle_successes as settle_successes
from rmqcompat.dlq.chunk import Record
from rmqcompat.dlq.chunk import replay_records as replay_records
from rmqcompat.dlq.chunk import take_chunk as take_chunk
from rmqcompat.dlq.model import decode_ids
from rmqcompat.dlq.page import compact_rows as compact_rows
from rmqcompat.forwarder.holding import hold_run as hold_run
from rmqcompat.forwarder.holding import record_size as record_size
from rmqcompat.forwarder.plan import plain_release as plain_release
from rmqcompat.forwarder.run import forward_run as forward_run
from rmqcompat.message import MessageExt
from rmqcompat.message_id import MessageIds as MessageIds
from rmqcompat.process_queue import ProcessQueue as ProcessQueue
from rmqcompat.producer.deliveries import DeliveryReports as DeliveryReports
from rmqcompat.producer.pending import PendingSend as PendingSend
from rmqcompat.producer.plain_lane import PlainLane as PlainLane
from rmqcompat.producer.records import plain_headers as plain_headers
from rmqcompat.properties import Headers, encode_properties
from rmqcompat.trace.batch import pack_events as pack_events
from rmqcompat.trace.bulk import consume_calls as consume_calls
from rmqcompat.trace.bulk import forward_events as forward_events
from rmqcompat.trace.bulk import publish_events as publish_events
from rmqcompat.trace.bulk import replay_events as replay_events
from rmqcompat.trace.bulk import send_back_events as send_back_events
from rmqcompat.wire import decode_well_formed
from rmqcompat.wire import plain_decode as plain_decode

decode_headers = decode_well_formed
decode_letter_ids = decode_ids
to_headers = encode_properties

# the one exception to the rule above: the headers of the pure reference's record
# (rmqcompat.consumer.sendback_record.send_back_record without the core)
def send_back_headers(
    msg: MessageExt, reconsume_times: int, real_topic: str, level: int, due_ms: int
) -> Headers: ...

# the core as a librdkafka plugin (rmqcompat.core_plugin)
def plugin_available() -> bool: ...

# what the trace encoders above return, whose reference is a list of bytes
class Encodings:
    def __len__(self) -> int: ...
    def __getitem__(self, at: int, /) -> bytes: ...

# the CONSUME events the core's settlement writes, from the fields the intake kept or
# from the messages (its own: the pure path hands the calls to
# rmqcompat.trace.bulk.consumed_ok)
class ConsumeEvents:
    def __init__(self, head: bytes, success: bytes) -> None: ...
    def __len__(self) -> int: ...
    def take(self) -> KeptEvents: ...

# what a panic of the core raises (PyO3's): a bug, see rmqcompat.core.BUG_ERRORS
class PanicException(BaseException): ...

# the events a ConsumeEvents noted or encoded, read as Encodings are
class KeptEvents:
    @property
    def noted(self) -> int: ...
    def __len__(self) -> int: ...
    def __getitem__(self, at: int, /) -> bytes: ...

# the kept path of one fetched record, for the parity tests (its reference: plain_decode,
# then rmqcompat.trace.bulk.consume_calls)
def kept_consume_event(
    head: bytes,
    success: bytes,
    topic: str,
    took_ms: int,
    physical: str,
    partition: int,
    offset: int,
    timestamp: int,
    headers: list[tuple[bytes, bytes | None]],
) -> bytes | None: ...

# the direct fetch (rmqcompat.consumer.fetcher), whose reference is confluent-kafka's
# consume(): its records have confluent_kafka.Message's accessors
class DirectRecord:
    def error(self) -> KafkaError | None: ...
    def topic(self) -> str | None: ...
    def partition(self) -> int: ...
    def offset(self) -> int: ...
    def key(self) -> bytes | None: ...
    def value(self) -> bytes | None: ...
    def headers(self) -> list[tuple[str, bytes | None]] | None: ...
    def timestamp(self) -> tuple[int, int]: ...

class DirectBatch:
    def __len__(self) -> int: ...
    def __getitem__(self, at: int, /) -> DirectRecord | None: ...
    def __setitem__(self, at: int, value: None, /) -> None: ...

class DirectFetch:
    @staticmethod
    def of(token: str) -> DirectFetch | None: ...
    def forward(self, topic: str, partition: int) -> None: ...
    def take(self, max: int, timeout_s: float, consume_fields: bool = False) -> DirectBatch: ...
    def close(self) -> None: ...

# the direct produce (rmqcompat.dlq.transactions), whose reference is confluent-kafka's
# positional Producer.produce without a callback
class DirectProduce:
    @staticmethod
    def of(token: str) -> DirectProduce | None: ...
    def produce(self, records: Sequence[Record], start: int) -> int: ...
