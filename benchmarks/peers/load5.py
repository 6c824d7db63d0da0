"""The RocketMQ 5 client workloads of ``benchmarks/rocketmq_peers.py``.

The same code runs the official ``rocketmq-python-client`` against Apache RocketMQ (in its
own virtual environment, where ``import rocketmq`` is that client: ``python load5.py
<endpoint> <workload> <topic> <group> <count> <size>`` prints one JSON line) and
``rmqcompat.v5`` against Kafka (``rocketmq_peers.py`` imports it and passes the module),
so it imports nothing of this repository.

Workloads, each a figure of messages a second and the process's CPU time a message:

- ``produce``: one ``Producer``; a first ``send`` outside the clock (connection, route),
  then ``send_async`` of ``count`` messages of ``size`` bytes, keeping every future; the
  clock stops when every receipt came.
- ``simple``: one ``SimpleConsumer`` of a new group; ``receive(32, 15 s)`` and ``ack``
  of each message until ``count`` were acknowledged; from the first receive that returned
  messages to the last ack.
- ``push``: one ``PushConsumer`` of a new group (its default consumption threads) whose
  listener returns SUCCESS; from the first listener call to the ``count``-th.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

#: How long a workload may take, the messages a receive asks for, their invisible time
#: (seconds), and a receive's long-polling wait (the proxy's shortest, seconds).
_TIMEOUT_S, _BATCH, _INVISIBLE_S, _AWAIT_S = 300, 32, 15, 5


def run(
    api: Any, config: Any, workload: str, topic: str, group: str, count: int, size: int
) -> dict[str, float]:
    """The figures of one ``workload`` (see the module's text)."""
    if workload == "produce":
        return produce(api, config, topic, count, size)
    consumers = {"simple": simple, "push": push}
    if workload not in consumers:
        raise ValueError(f"no workload {workload!r}")
    return consumers[workload](api, config, topic, group, count)


def produce(api: Any, config: Any, topic: str, count: int, size: int) -> dict[str, float]:
    producer = api.Producer(config, (topic,))
    producer.startup()
    try:
        producer.send(_message(api, topic, b"warm-up"))
        body = b"x" * size
        start, cpu = time.perf_counter(), time.process_time()
        futures = [producer.send_async(_message(api, topic, body)) for _ in range(count)]
        for future in futures:
            future.result(timeout=_TIMEOUT_S)
        return _figures(count, start, cpu)
    finally:
        producer.shutdown()


def simple(api: Any, config: Any, topic: str, group: str, count: int) -> dict[str, float]:
    consumer = api.SimpleConsumer(config, group, {topic: api.FilterExpression("*")}, _AWAIT_S)
    consumer.startup()
    try:
        acked, start, cpu = 0, 0.0, 0.0
        deadline = time.monotonic() + _TIMEOUT_S
        while acked < count and time.monotonic() < deadline:
            try:
                messages = consumer.receive(_BATCH, _INVISIBLE_S)
            except Exception:  # an empty long poll may raise: poll again
                continue
            if messages and not start:
                start, cpu = time.perf_counter(), time.process_time()
            for msg in messages or ():
                consumer.ack(msg)
                acked += 1
        if acked < count:
            raise SystemExit(f"simple consumer acknowledged {acked} of {count}")
        return _figures(count, start, cpu)
    finally:
        consumer.shutdown()


def push(api: Any, config: Any, topic: str, group: str, count: int) -> dict[str, float]:
    lock, done = threading.Lock(), threading.Event()
    state = {"seen": 0, "start": 0.0, "cpu": 0.0}

    class Listener(api.MessageListener):  # type: ignore[misc,name-defined]
        def consume(self, message: Any) -> Any:
            with lock:
                if not state["seen"]:
                    state["start"], state["cpu"] = time.perf_counter(), time.process_time()
                state["seen"] += 1
                if state["seen"] == count:
                    done.set()
            return api.ConsumeResult.SUCCESS

    consumer = api.PushConsumer(config, group, Listener(), {topic: api.FilterExpression("*")})
    consumer.startup()
    try:
        if not done.wait(_TIMEOUT_S):
            raise SystemExit(f"push consumer saw {state['seen']} of {count}")
        return _figures(count, state["start"], state["cpu"])
    finally:
        consumer.shutdown()


def _message(api: Any, topic: str, body: bytes) -> Any:
    msg = api.Message()
    msg.topic = topic
    msg.body = body
    return msg


def _figures(count: int, start: float, cpu: float) -> dict[str, float]:
    elapsed = time.perf_counter() - start
    return {"rate": count / elapsed, "cpu_us": (time.process_time() - cpu) / count * 1e6}


def main() -> None:
    import rocketmq  # the official client, in the reference virtual environment

    endpoint, workload, topic, group, count, size = sys.argv[1:7]
    config = rocketmq.ClientConfiguration(endpoint, rocketmq.Credentials())
    figures = run(rocketmq, config, workload, topic, group, int(count), int(size))
    print(json.dumps(figures), flush=True)


if __name__ == "__main__":
    main()
