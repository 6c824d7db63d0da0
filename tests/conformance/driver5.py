"""Runs a 5.x conformance scenario through the RocketMQ 5 Python client API and records what
the application observes, in the raw shape ``history.py`` reads.

The same code drives both systems: on RocketMQ it runs in the reference virtual
environment against the official ``rocketmq-python-client`` (``python driver5.py
<endpoint> <scenario.json>`` prints the observations as one JSON line); on rmqcompat
``rmqcompat5_runner.py`` calls :func:`drive` with ``rmqcompat.v5``. So it imports nothing
of this repository, and only the API both share.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

#: The await (long polling) of a receive: the proxy's shortest.
_AWAIT_S = 5


class Recording:
    """The raw observations of one run as ``Driver.java`` prints them, and the wait for
    the run's end; shared by the 4.x observer on rmqcompat and this driver."""

    def __init__(self, quiet_ms: int, grace_ms: int, timeout_ms: int) -> None:
        self.raw: dict[str, Any] = {
            "sent": {},
            "deliveries": [],
            "dlq": [],
            "checks": [],
            "locals": [],
            "send_errors": [],
            "check_max": [],
        }
        self._times = (quiet_ms / 1000, grace_ms / 1000, timeout_ms / 1000)
        self._attempts: dict[str, int] = {}
        self._lock = threading.Lock()
        self.last_event = time.monotonic()

    def next_attempt(self, key: str) -> int:
        """The attempt (0-based) of this delivery of ``key``; call under ``_lock``."""
        attempt = self._attempts.get(key, 0)
        self._attempts[key] = attempt + 1
        return attempt

    def event(self, kind: str, entry: dict[str, Any]) -> None:
        with self._lock:
            self.raw[kind].append(entry)
            self.last_event = time.monotonic()

    def sent(self, key: str, msg_id: str, sent_ms: int) -> None:
        with self._lock:
            self.raw["sent"][key] = {"ms": sent_ms, "msg_id": msg_id}
            self.last_event = time.monotonic()

    def await_quiet(self) -> None:
        """Quiet for the quiet time from the first delivery (or from the grace time after
        the start when nothing is delivered), or the timeout."""
        start = time.monotonic()
        quiet_s, grace_s, timeout_s = self._times
        while time.monotonic() - start < timeout_s:
            with self._lock:
                delivered = bool(self.raw["deliveries"])
            now = time.monotonic()
            if (delivered or now - start >= grace_s) and now - self.last_event >= quiet_s:
                return
            time.sleep(0.1)


class Recorder(Recording):
    """A 5.x run's observations, and the scenario's answer per message and attempt."""

    def __init__(self, spec: dict[str, Any]) -> None:
        super().__init__(spec["quiet_ms"], spec["first_delivery_grace_ms"], spec["timeout_ms"])
        self._replies: dict[str, list[dict[str, Any]]] = spec["replies"]

    def deliver(self, msg: Any) -> dict[str, Any]:
        """Record a delivery of ``msg``; the reply for it."""
        with self._lock:
            key = key_of(msg)
            attempt = self.next_attempt(key)
            answers = self._replies.get(key) or [{"kind": "success"}]
            reply = answers[min(attempt, len(answers) - 1)]
            batch = len(self.raw["deliveries"])
            seen = observe(msg) | {"attempt": attempt, "batch": batch, "pos": 0, "reply": reply}
            self.raw["deliveries"].append(seen)
            self.last_event = time.monotonic()
            return reply


def key_of(msg: Any) -> str:
    """The scenario's key of a received message (its only key)."""
    keys = msg.keys
    return str(keys) if isinstance(keys, str) else sorted(keys)[0]


def observe(msg: Any) -> dict[str, Any]:
    """What a listener reads of a received message (RocketMQ 5 keeps system properties out
    of ``properties``: the tag, keys and group are fields of their own)."""
    return {
        "key": key_of(msg),
        "topic": msg.topic,
        "reconsume_times": msg.delivery_attempt - 1,
        "delivery_attempt": msg.delivery_attempt,
        "message_group": msg.message_group,
        "msg_id": msg.message_id,
        "body": bytes(msg.body).decode("utf-8"),
        "properties": {"TAGS": msg.tag, "KEYS": key_of(msg), **dict(msg.properties or {})},
        "ms": time.time_ns() // 1_000_000,
    }


def drive(api: Any, config: Any, spec: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    """Run the scenario ``spec`` through ``api`` (a module with the RocketMQ 5 names) with
    the client configuration ``config``; ``options`` are extra keyword arguments for the
    consumers (rmqcompat's ``max_attempts``, which RocketMQ's proxy sends instead)."""
    recorder = Recorder(spec)
    topic, group = spec["topic"], spec["group"]
    subscription = {topic: api.FilterExpression(spec["subscription"])}
    letters = api.PushConsumer(
        config,
        spec["dlq_group"],
        _listener(api, lambda m: recorder.event("dlq", observe(m))),
        {f"%DLQ%{group}": api.FilterExpression("*")},
        **options,
    )
    letters.startup()
    if spec["consumer"] == "push":
        consumer = api.PushConsumer(
            config,
            group,
            _listener(api, lambda m: _answer(api, recorder.deliver(m))),
            subscription,
            **options,
        )
    else:
        consumer = api.SimpleConsumer(config, group, subscription, _AWAIT_S, **options)
    stop = threading.Event()
    try:
        if spec["consumer_first"]:
            _start(consumer, spec, recorder, stop)
        _send_all(api, config, spec, recorder)
        if not spec["consumer_first"]:
            _start(consumer, spec, recorder, stop)
        recorder.await_quiet()
    finally:
        stop.set()
        consumer.shutdown()
        letters.shutdown()
    return recorder.raw


def _start(consumer: Any, spec: dict[str, Any], recorder: Recorder, stop: threading.Event) -> None:
    consumer.startup()
    if spec["consumer"] == "simple":
        threading.Thread(
            target=_receive_loop, args=(consumer, spec, recorder, stop), daemon=True
        ).start()


def _receive_loop(
    consumer: Any, spec: dict[str, Any], recorder: Recorder, stop: threading.Event
) -> None:
    """Receive, answer each message as the scenario says (ack, let it expire, or change its
    invisible duration first), until the run ends."""
    while not stop.is_set():
        try:
            messages = consumer.receive(spec["batch_size"], spec["invisible_s"])
        except Exception:  # an empty long poll may raise: poll again, not in a busy loop
            stop.wait(0.1)
            continue
        for msg in messages or ():
            reply = recorder.deliver(msg)
            if reply["kind"] == "success":
                consumer.ack(msg)
            elif reply.get("invisible_s") is not None:
                consumer.change_invisible_duration(msg, reply["invisible_s"])


def _answer(api: Any, reply: dict[str, Any]) -> Any:
    if reply["kind"] == "exception":
        raise RuntimeError("scenario: listener throws")
    return api.ConsumeResult.SUCCESS if reply["kind"] == "success" else api.ConsumeResult.FAILURE


def _listener(api: Any, consume: Any) -> Any:
    class Listener(api.MessageListener):  # type: ignore[misc,name-defined]
        def consume(self, message: Any) -> Any:
            return consume(message) or api.ConsumeResult.SUCCESS

    return Listener()


def _send_all(api: Any, config: Any, spec: dict[str, Any], recorder: Recorder) -> None:
    producer = api.Producer(config, (spec["topic"],))
    producer.startup()
    try:
        for item in spec["messages"]:
            msg = api.Message()
            msg.topic = spec["topic"]
            msg.body = item["body"].encode()
            msg.tag = item["tags"]
            msg.keys = item["key"]
            for name, value in item["properties"].items():
                msg.add_property(name, value)
            if item["message_group"]:
                msg.message_group = item["message_group"]
            if item["deliver_after_ms"]:
                # the client sends whole seconds: send on a whole second, so the wait is
                # the scenario's on both systems
                time.sleep(1 - time.time() % 1)
            before = time.time_ns() // 1_000_000
            if item["deliver_after_ms"]:
                msg.delivery_timestamp = (before + item["deliver_after_ms"]) // 1000
            try:
                recorder.sent(item["key"], producer.send(msg).message_id, before)
            except Exception as exc:  # a refused send is an observation
                recorder.event("send_errors", {"key": item["key"], "error": repr(exc)})
    finally:
        producer.shutdown()


def main() -> None:
    import rocketmq  # the official client, in the reference virtual environment

    endpoint, path = sys.argv[1], sys.argv[2]
    with open(path, encoding="utf-8") as spec_file:
        spec = json.load(spec_file)
    config = rocketmq.ClientConfiguration(endpoint, rocketmq.Credentials())
    raw = drive(rocketmq, config, spec, {})
    print(json.dumps(raw), flush=True)


if __name__ == "__main__":
    main()
