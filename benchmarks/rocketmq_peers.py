"""What moving costs or gains: the same workloads with RocketMQ's own clients against
Apache RocketMQ 5.5.0, and with rmqcompat against Apache Kafka, on the same machine.

- RocketMQ: the name server and the proxy in local mode (its broker inside), started as
  the conformance suite starts them (``tests/conformance/reference_broker.py``, the jars
  from Maven Central, once); topics of 4 queues. The Java client (5.5.0,
  ``DefaultMQProducer.send(msg, callback)``, ``DefaultMQPushConsumer``) runs
  ``peers/PeerLoad.java``; the official Python 5 client (``rocketmq-python-client``,
  gRPC through the proxy, in its own virtual environment) runs ``peers/load5.py``.
- rmqcompat: a dev broker of ``--broker`` kind (or ``--bootstrap-servers``), topics of 4
  partitions. Its RocketMQ 5 API (``rmqcompat.v5``) runs the very same ``peers/load5.py``;
  its 4.x API runs ``produce.py``'s ``send_async`` and ``consume.py``'s push consumer
  (batch 1), the workloads the Java client runs here. rmqcompat's clients trace (the
  product default, as ``rmqcompat.v5`` always does); RocketMQ's clients do not (their
  default: the Java client's ``enableMsgTrace`` is off, the Python client has none).

Workloads (``--messages`` messages of 200 bytes, at most 36,000: see ``YOUNG_QUEUES``):
produce with async sends, waiting for every outcome; consume a topic already filled, from
a new group, with a listener or a receive/ack loop that does nothing else. Each figure is
messages a second and the client's CPU time a message (all its threads; for Java the
JVM's, JIT and collector included; the 4.x API's lines of ``produce.py`` and
``consume.py`` print theirs). RocketMQ's clients run in processes of their own,
rmqcompat's in this one; the two systems alternate, ``--runs`` times, and the script
prints every run and the medians. The brokers share the 2 cores with the client
measured: both systems' figures include that. RocketMQ runs only while its clients are
measured (its idle proxy would take CPU from rmqcompat's runs); the Kafka broker runs
throughout.

    python benchmarks/rocketmq_peers.py [-n 36000] [--runs 3] [--bootstrap-servers h:p]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import uuid
from pathlib import Path

import consume
import produce
from bench_broker import add_broker_options, broker
from peers import load5

from rmqcompat import v5
from rmqcompat.devbroker.apache_kafka import run_tool
from rmqcompat.topics.provision import ensure_topics
from rmqcompat.topics.spec import TopicSpec

_HERE = Path(__file__).parent
sys.path.insert(0, str(_HERE.parent / "tests" / "conformance"))
from reference_broker import ReferenceBroker  # noqa: E402  (the conformance suite's)
from reference_runtime import compile_sources, reference_python  # noqa: E402

SIZE = 200
QUEUES = 4
#: The most messages a run sends to one topic: a new RocketMQ 5 group (which has no
#: "consume from" setting) starts at a queue's first message only while the queue is
#: young, under 10,000 messages (and 5 minutes old), on RocketMQ and on rmqcompat.v5
#: alike; 4 queues of 9,000 and the warm-up message stay under it.
YOUNG_QUEUES = 36_000
_TOOL_TIMEOUT_S = 600

Figures = dict[str, float]


class RocketMQSide:
    """A running RocketMQ and its two clients' workloads, each in a process of its own."""

    def __init__(self, reference: ReferenceBroker, classes: Path) -> None:
        self._ref = reference
        self._classpath = f"{reference.jars / '*'}{os.pathsep}{classes}"
        self._python = reference_python(reference.jars)

    def setup(self, topic: str, *groups: str) -> None:
        """Create ``topic`` (4 queues) and the consumer ``groups`` (the proxy refuses a
        consumer of a group that does not exist)."""
        _run(self._java("setup", self._ref.namesrv, topic, str(QUEUES), *groups))

    def java_produce(self, topic: str, count: int) -> Figures:
        return _figures(
            _run(self._java("produce", self._ref.namesrv, topic, str(count), str(SIZE)))
        )

    def java_consume(self, topic: str, group: str, count: int) -> Figures:
        argv = self._java("consume", self._ref.namesrv, topic, group, str(count), "1")
        return _figures(_run(argv))

    def python5(self, workload: str, topic: str, group: str, count: int) -> Figures:
        script = str(_HERE / "peers" / "load5.py")
        argv = [str(self._python), script, self._ref.grpc, workload, topic, group]
        return _figures(_run([*argv, str(count), str(SIZE)]))

    def _java(self, *args: str) -> list[str]:
        return [
            self._ref.java,
            *self._ref.system_properties(),
            "-cp",
            self._classpath,
            "PeerLoad",
            *args,
        ]


def _run(argv: list[str]) -> str:
    result = run_tool(argv, _TOOL_TIMEOUT_S)
    if result.returncode != 0:
        raise SystemExit(f"{argv[-6:]} failed (exit {result.returncode}): {result.stderr[-3000:]}")
    return result.stdout


def _figures(stdout: str) -> Figures:
    """The JSON line a workload printed last."""
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise SystemExit(f"a workload printed no figures: {stdout[-2000:]}")
    return json.loads(lines[-1])


def kafka_figures(bootstrap: str, count: int) -> dict[str, Figures]:
    """rmqcompat's figures of one run on Kafka: the 5.x API through ``load5`` and the 4.x
    API through ``produce.py`` and ``consume.py`` (each prints its CPU a message). The
    consumers read a topic filled with keyed records, so that its 4 partitions fill evenly
    as RocketMQ's producers fill its queues in turn (unkeyed records go to one partition
    at a time, and a partition of over 10,000 is not young: a new 5.x group would start
    at its end)."""
    out: dict[str, Figures] = {}
    topic = f"peer-{uuid.uuid4().hex[:8]}"
    ensure_topics({"bootstrap.servers": bootstrap}, {topic: TopicSpec(QUEUES)})
    out["python5 produce"] = load5.produce(
        v5, v5.ClientConfiguration(bootstrap), topic, count, SIZE
    )
    out["4.x produce"] = {"rate": produce.sdk_run(bootstrap, topic, count, trace=True)}
    filled = f"peer-{uuid.uuid4().hex[:8]}"
    consume.fill(bootstrap, filled, count, SIZE, keyed=True)
    config = v5.ClientConfiguration(bootstrap, namespace=consume.NS)
    for workload in ("simple", "push"):
        group = f"peer-{workload}-{uuid.uuid4().hex[:8]}"
        out[f"python5 {workload}"] = load5.run(v5, config, workload, filled, group, count, SIZE)
    out["4.x consume"] = {"rate": consume.sdk(bootstrap, filled, count, 1, trace=True)}
    return out


def rocketmq_figures(side: RocketMQSide, count: int) -> dict[str, Figures]:
    """RocketMQ's figures of one run: its Java and its Python 5 client."""
    out: dict[str, Figures] = {}
    java_topic, py_topic = (f"Peer{kind}{uuid.uuid4().hex[:8]}" for kind in ("J", "P"))
    java_group, simple_group, push_group = (f"Peer{k}{uuid.uuid4().hex[:8]}" for k in "JSP")
    side.setup(java_topic, java_group)
    side.setup(py_topic, simple_group, push_group)
    out["4.x produce"] = side.java_produce(java_topic, count)
    out["4.x consume"] = side.java_consume(java_topic, java_group, count)
    out["python5 produce"] = side.python5("produce", py_topic, "", count)
    out["python5 simple"] = side.python5("simple", py_topic, simple_group, count)
    out["python5 push"] = side.python5("push", py_topic, push_group, count)
    return out


WORKLOADS = ("4.x produce", "4.x consume", "python5 produce", "python5 simple", "python5 push")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--messages", type=int, default=YOUNG_QUEUES)
    parser.add_argument("--runs", type=int, default=3)
    add_broker_options(parser)
    args = parser.parse_args()
    if not 0 < args.messages <= YOUNG_QUEUES:
        young = "a new 5.x group starts at 0 only on young queues"
        parser.error(f"--messages must be in 1..{YOUNG_QUEUES} ({young})")
    runs: dict[str, list[dict[str, Figures]]] = {"RocketMQ": [], "rmqcompat": []}
    with tempfile.TemporaryDirectory(prefix="peer-classes-") as classes, broker(args) as bootstrap:
        for run in range(1, args.runs + 1):
            # RocketMQ runs only while its clients are measured: its idle JVMs (the proxy's
            # above all) would take CPU from rmqcompat's runs
            reference = ReferenceBroker()
            if run == 1:
                compile_sources(reference.jars, [_HERE / "peers" / "PeerLoad.java"], Path(classes))
            reference.start()
            try:
                side = RocketMQSide(reference, Path(classes))
                runs["RocketMQ"].append(rocketmq_figures(side, args.messages))
            finally:
                reference.stop()
            runs["rmqcompat"].append(kafka_figures(bootstrap, args.messages))
            _show(f"run {run}", {k: v[-1] for k, v in runs.items()})
    _show(f"medians of {args.runs} runs", {k: _medians(v) for k, v in runs.items()})
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def _medians(runs: list[dict[str, Figures]]) -> dict[str, Figures]:
    return {
        workload: {
            key: statistics.median(r[workload][key] for r in runs) for key in runs[0][workload]
        }
        for workload in WORKLOADS
    }


def _show(title: str, sides: dict[str, dict[str, Figures]]) -> None:
    print(f"{title} ({SIZE} B messages; msgs/s, and CPU us a message where measured):", flush=True)
    for workload in WORKLOADS:
        cells = [f"{name} {_cell(figures[workload])}" for name, figures in sides.items()]
        ours, theirs = sides["rmqcompat"][workload]["rate"], sides["RocketMQ"][workload]["rate"]
        print(f"  {workload:16} " + "  ".join(cells) + f"  rmqcompat/RocketMQ {ours / theirs:.2f}")


def _cell(figures: Figures) -> str:
    cpu = figures.get("cpu_us")
    return f"{figures['rate']:,.0f}" + ("" if cpu is None else f" ({cpu:.1f} us)")


if __name__ == "__main__":
    main()
