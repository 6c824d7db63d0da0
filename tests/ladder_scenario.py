"""The retry scenario the fault tests run on the three-node cluster (no tests here).

10,000 messages on a replicated four-partition topic, consumed by two consumer processes
and forwarded by two forwarder processes (the ``forwarder run`` command), with a fast delay
table. Each message's body says its fate: most succeed at once; one in ten fails once,
one in ten twice, one in ten three times (failures at ladder steps 0, 1 and 2, so levels
3, 4 and 5 carry traffic); one in a hundred fails every time until it is replayed, so it
is dead-lettered after ``MAX_RECONSUME`` retries and succeeds once the DLQ is replayed.
Batches of up to 8: a batch whose failures are all at its end is settled with RocketMQ's
``ack_index``; any other batch marks its failed messages (per-message failure).

Run as a script, this file is the consumer child: it appends one line per message and
outcome (``<number> <reconsume_times> OK|LATER [replayed]``) to its own log file and
fsyncs it *before* returning to the consumer, so a success the broker may not know of yet
is still on record. The history is those logs plus the DLQ; :class:`History` checks it.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer

from rmqcompat import properties as props
from rmqcompat.config import ClientConfig
from rmqcompat.devbroker import free_port
from rmqcompat.forwarder.settings import forwarder_group
from rmqcompat.topics.naming import kafka_group_id
from rmqcompat.topics.provision import ensure_topics
from rmqcompat.topics.spec import REPLICATED, TopicSpec
from rmqcompat.trace import Emitter, KafkaTraceSink, default_client_id

MESSAGES = 10_000
PARTITIONS = 4
MAX_RECONSUME = 3
BATCH = 8
#: Levels 1..10; the ladder (level 3 + reconsume times) uses 300 ms .. 600 ms.
DELAY_TABLE = "100ms 200ms 300ms 400ms 500ms 600ms 700ms 800ms 900ms 1s"
TOPIC = "Orders"
GROUP = "ladder"
#: Safety net only: a run that has not settled by then has failed (nothing is timed; a
#: fault-free run settles in 10-30 s, one with a fault in 10-90 s).
GIVE_UP_S = 150.0

_FORWARDER = (
    "import sys; from rmqcompat.cli.context import CliContext; "
    "from rmqcompat.cli.forwarder_cmd import forwarder; "
    "forwarder(sys.argv[3:], obj=CliContext(sys.argv[1], sys.argv[2]))"
)


def failures(number: int) -> int | None:
    """How many deliveries of message ``number`` fail before it succeeds; ``None``: every
    one until it is replayed from the DLQ."""
    if number % 100 == 7:
        return None
    return {1: 1, 2: 2, 3: 3}.get(number % 10, 0)


def expected_dead() -> set[int]:
    return {n for n in range(MESSAGES) if failures(n) is None}


def child(bootstrap: str, namespace: str, log_path: str, overrides: str) -> None:
    """A consumer of the scenario's group until SIGTERM (or a SIGKILL)."""
    from rmqcompat.consumer.listener import ConsumeConcurrentlyStatus as Status
    from rmqcompat.consumer.listener import ConsumeFromWhere
    from rmqcompat.consumer.push_consumer import DefaultMQPushConsumer

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    log = open(log_path, "a", encoding="utf-8")

    def listener(msgs: list[Any], ctx: Any) -> Any:
        fails = [_fails(m) for m in msgs]
        first = fails.index(True) if True in fails else len(msgs)
        status = Status.CONSUME_SUCCESS
        if first < len(msgs) and all(fails[first:]):
            ctx.ack_index = first - 1  # RocketMQ's ackIndex: [0..first-1] succeeded
        elif first < len(msgs):
            for i in (i for i, failed in enumerate(fails) if failed):
                ctx.fail(i)
            status = Status.RECONSUME_LATER
        log.write("".join(_line(m, failed) for m, failed in zip(msgs, fails, strict=True)))
        log.flush()
        os.fsync(log.fileno())
        return status

    consumer = DefaultMQPushConsumer(
        GROUP,
        bootstrap_servers=bootstrap,
        namespace=namespace,
        message_delay_level=DELAY_TABLE,
        kafka_config=json.loads(overrides),
        consume_from_where=ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET,
        consume_message_batch_max_size=BATCH,
        max_reconsume_times=MAX_RECONSUME,
        consume_thread_max=4,
        persist_consumer_offset_interval=0.2,
    )
    consumer.subscribe(TOPIC)
    consumer.register_message_listener(listener)
    # blocked before the consumer's threads start (they inherit it), so sigwait gets it
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    consumer.start()
    while signal.sigwait({signal.SIGTERM, signal.SIGINT, signal.SIGUSR1}) == signal.SIGUSR1:
        _dump(consumer)
    consumer.shutdown()


def _dump(consumer: Any) -> None:
    """On SIGUSR1: the consumer's partitions (paused, in flight, span, committed), its
    send-backs awaiting a delivery report and where each thread is (the poll thread's
    stack in full), to stderr: what a stalled run's consumer is waiting for."""
    out = [f"=== {time.strftime('%H:%M:%S')} pid {os.getpid()}: partitions"]
    try:
        stats = consumer.stats()
    except RuntimeError as exc:  # the poll thread changed the assignment meanwhile
        stats = {("unavailable", -1): {"error": str(exc)}}
    out += [f"  {topic}[{partition}]: {row}" for (topic, partition), row in stats.items()]
    settlement = getattr(getattr(consumer, "_service", None), "settlement", None)
    if settlement is not None:
        out.append(
            f"  running batches {settlement.running()}, "
            f"send-backs awaiting a report {settlement.pending_sendbacks}"
        )
    frames = sys._current_frames()  # the other threads' innermost frames
    for thread in threading.enumerate():
        frame = frames.get(thread.ident or -1)
        if frame is None or thread is threading.current_thread():
            continue
        stack = traceback.extract_stack(frame)
        if thread.name.startswith("rmqcompat-poll"):
            out.append(f"  {thread.name}:\n" + "".join(traceback.format_list(stack[-8:])))
        else:
            top = stack[-1]
            out.append(f"  {thread.name}: {top.filename}:{top.lineno} {top.name}")
    print("\n".join(out), file=sys.stderr, flush=True)


def _fails(msg: Any) -> bool:
    wanted = failures(int(msg.body))
    if wanted is None:
        return props.REPLAY_ID not in msg.properties
    return bool(msg.reconsume_times < wanted)


def _line(msg: Any, failed: bool) -> str:
    replayed = " replayed" if props.REPLAY_ID in msg.properties else ""
    outcome = "LATER" if failed else "OK"
    return f"{int(msg.body)} {msg.reconsume_times} {outcome}{replayed}\n"


@dataclass
class Processes:
    """The scenario's child processes: consumers and forwarders, each restartable."""

    bootstrap: str
    namespace: str
    overrides: dict[str, Any]
    logs: Path
    consumers: list[subprocess.Popen[bytes]] = field(default_factory=list)
    forwarders: list[subprocess.Popen[bytes]] = field(default_factory=list)
    spawned: int = 0
    #: forwarder pid -> the port of its /metrics and /health
    metrics_ports: dict[int, int] = field(default_factory=dict)
    #: consumer pid -> its outcome log; the logs of the consumers SIGKILLed
    consumer_logs: dict[int, Path] = field(default_factory=dict)
    killed_logs: list[Path] = field(default_factory=list)

    def start(self, consumers: int = 2, forwarders: int = 2) -> None:
        """Start the processes and wait until every one owns partitions in its group: a
        rebalance while the first messages flow is not one of the faults under test."""
        for _ in range(consumers):
            self.consumers.append(self.consumer())
        for _ in range(forwarders):
            self.forwarders.append(self.forwarder())
        for group_id, count in (
            (kafka_group_id(GROUP, self.namespace), consumers),
            (forwarder_group(self.namespace), forwarders),
        ):
            wait_for(
                lambda g=group_id, c=count: members_with_partitions(self.bootstrap, g) == c,
                f"{count} members of {group_id} with partitions",
            )

    def consumer(self) -> subprocess.Popen[bytes]:
        self.spawned += 1
        log = self.logs / f"consumer-{self.spawned}.log"
        args = [self.bootstrap, self.namespace, str(log), json.dumps(self.overrides)]
        # the child waits for SIGTERM with sigwait: it must be blocked from the start
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        try:
            process = _spawn([sys.executable, __file__, *args], log)
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        self.consumer_logs[process.pid] = log
        return process

    def forwarder(self) -> subprocess.Popen[bytes]:
        passthrough = [arg for k, v in self.overrides.items() for arg in ("-X", f"{k}={v}")]
        argv = [sys.executable, "-c", _FORWARDER, self.bootstrap, self.namespace, "run"]
        port = free_port()
        argv += ["--message-delay-level", DELAY_TABLE, "--metrics-port", str(port), *passthrough]
        self.spawned += 1
        process = _spawn(argv, self.logs / f"forwarder-{self.spawned}.log")
        self.metrics_ports[process.pid] = port
        return process

    def health_ports(self) -> list[int]:
        """The /health ports of the forwarders running now."""
        return [self.metrics_ports[process.pid] for process in self.forwarders]

    def kill_and_restart(self, kind: str) -> None:
        """SIGKILL the first process of ``kind`` (consumers or forwarders), start another."""
        group = self.consumers if kind == "consumers" else self.forwarders
        victim = group.pop(0)
        victim.kill()
        victim.wait()
        if victim.pid in self.consumer_logs:
            self.killed_logs.append(self.consumer_logs[victim.pid])
        group.append(self.consumer() if kind == "consumers" else self.forwarder())

    def stop(self) -> None:
        for process in [*self.consumers, *self.forwarders]:
            process.terminate()
        for process in [*self.consumers, *self.forwarders]:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _spawn(argv: list[str], log: Path) -> subprocess.Popen[bytes]:
    """Start a child whose warnings and errors go beside ``log`` (``.stderr``), kept in the
    test's temporary directory: a failed run's first evidence."""
    with log.with_suffix(".stderr").open("ab") as stderr:
        return subprocess.Popen(argv, stderr=stderr)


def members_with_partitions(bootstrap: str, group_id: str) -> int:
    """How many members of ``group_id`` own at least one partition, the group being stable."""
    from confluent_kafka import ConsumerGroupState
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        described = admin.describe_consumer_groups([group_id])[group_id].result(timeout=10)
    except (KafkaException, TimeoutError):  # no coordinator yet, or busy
        return 0
    if described.state != ConsumerGroupState.STABLE:
        return 0
    return sum(1 for m in described.members if m.assignment.topic_partitions)


def provision(bootstrap: str, namespace: str) -> None:
    """The business topic, replicated as the internal ones are (the consumers create those)."""
    spec = TopicSpec(PARTITIONS, REPLICATED)
    ensure_topics({"bootstrap.servers": bootstrap}, {TOPIC: spec}, namespace)


def produce(bootstrap: str, namespace: str) -> None:
    """Produce the messages, each traced as published once the broker acknowledged it (a
    ``PUBLISH`` event in the namespace's trace topic, as rmqcompat's producer traces its
    sends), so that the audit judges every one. The producer is a plain Kafka one: the
    scenario chooses the msg ids (``m<number>``), which the ledger check names."""
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True})
    topic = f"{namespace}.{TOPIC}"
    sink = KafkaTraceSink(ClientConfig(bootstrap, namespace))
    emitter = Emitter(default_client_id("ladder-producer"), namespace)
    sink.start()

    def acked(msg_id: str, error: KafkaError | None, _record: Any) -> None:
        if error is None:
            sink.emit(emitter.publish(msg_id, TOPIC, topic))

    for number in range(MESSAGES):
        headers = props.to_headers({props.UNIQ_KEY: f"m{number}"})
        producer.produce(
            topic,
            str(number).encode(),
            str(number).encode(),
            headers=headers,
            on_delivery=functools.partial(acked, f"m{number}"),
        )
        if number % 1000 == 999:
            producer.poll(0)
    assert producer.flush(60) == 0
    try:
        wait_for(lambda: sink.stats().written == MESSAGES, "the PUBLISH events traced")
    finally:
        sink.close()


def _consumer_logs(logs: Path) -> list[Path]:
    return sorted(logs.glob("consumer-*.log"))


def _logged(path: Path) -> Iterator[tuple[int, int, str]]:
    """A consumer log's lines as (message number, reconsume times, outcome); a replayed
    success's outcome carries its replay mark."""
    for line in path.read_text(encoding="utf-8").splitlines():
        number, times, outcome, *replayed = line.split()
        yield int(number), int(times), outcome + "".join(replayed)


@dataclass
class History:
    """What the consumers logged and what the DLQ holds, and the checks against the
    fault-free expectation (:func:`failures`)."""

    outcomes: dict[int, list[tuple[int, str]]]
    dead_letters: Counter[int]

    @classmethod
    def read(cls, logs: Path, dead_letters: list[bytes]) -> History:
        outcomes: dict[int, list[tuple[int, str]]] = defaultdict(list)
        for path in _consumer_logs(logs):
            for number, times, outcome in _logged(path):
                outcomes[number].append((times, outcome))
        return cls(dict(outcomes), Counter(int(body) for body in dead_letters))

    def succeeded(self) -> set[int]:
        return {n for n, seen in self.outcomes.items() if any(o.startswith("OK") for _, o in seen)}

    def ladder_done(self) -> bool:
        """Every message succeeded or is in the DLQ: the first phase is over."""
        dead = expected_dead()
        return set(self.dead_letters) >= dead and self.succeeded() >= set(range(MESSAGES)) - dead

    def replay_done(self) -> bool:
        return self.succeeded() >= set(range(MESSAGES))

    def lost(self) -> set[int]:
        return set(range(MESSAGES)) - self.succeeded()

    @staticmethod
    def succeeded_only_in(logs: Path, killed: list[Path]) -> set[int]:
        """Messages whose every success was logged by a SIGKILLed consumer (its ``killed``
        logs): the trace may hold none of them, for the events of a success the consumer
        had committed could still be in its trace buffer when it died."""
        only: set[int] = set()
        elsewhere: set[int] = set()
        for path in _consumer_logs(logs):
            into = only if path in killed else elsewhere
            into.update(number for number, _, outcome in _logged(path) if outcome.startswith("OK"))
        return only - elsewhere

    def duplicates(self) -> int:
        """Successes beyond the first of each message (before and after its replay)."""
        return sum(count - 1 for count in self._successes().values())

    def most_successes(self) -> int:
        """The most successes one message had (before or after its replay)."""
        return max(self._successes().values(), default=0)

    def _successes(self) -> Counter[tuple[int, str]]:
        return Counter(
            (n, o) for n, seen in self.outcomes.items() for _, o in seen if o.startswith("OK")
        )

    def dead_letter_duplicates(self) -> int:
        return sum(count - 1 for count in self.dead_letters.values())

    def off_the_ladder(self) -> dict[int, list[tuple[int, str]]]:
        """Messages that succeeded at another reconsume count than their fate says, or a
        dead one that succeeded before its replay."""
        wrong = {}
        for number, seen in self.outcomes.items():
            wanted = failures(number)
            ok_at = {times for times, o in seen if o == "OK"}
            if ok_at != (set() if wanted is None else {wanted}):
                wrong[number] = seen
        return wrong


def wait_for(predicate: Any, what: str) -> float:
    """Wait (polling every 0.5 s) until ``predicate()``; return how long it took."""
    started = time.monotonic()
    while not predicate():
        if time.monotonic() - started > GIVE_UP_S:
            raise AssertionError(f"gave up after {GIVE_UP_S:.0f} s waiting for {what}")
        time.sleep(0.5)
    return time.monotonic() - started


if __name__ == "__main__":
    child(*sys.argv[1:])
