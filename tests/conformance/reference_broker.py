"""Apache RocketMQ on loopback for the conformance suite: a name server and the proxy in
local mode, which runs the broker inside its own JVM, with a throwaway store. The 4.x
Java client talks to the name server and that broker directly (the proxy's remoting port
would send it on to the gRPC port, where sends fail); the 5.x Python client talks to the
proxy's gRPC port (:attr:`ReferenceBroker.grpc`). One start serves both.

Start-up waits for the name server to print "boot success", the proxy "startup
successfully" and its broker to log its registration with the name server;
:meth:`ReferenceBroker.stop` SIGKILLs both (a graceful proxy stop takes 17-35 s and the
store is thrown away anyway).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from reference_runtime import java, rocketmq_jars

from rmqcompat.devbroker.apache_kafka import child_env
from rmqcompat.devbroker.ports import HOST, free_port

#: The delay table both systems run with: fast, yet each level next to another differs, so
#: a ladder one level off shows in the gaps (RocketMQ's finest step is 1 s).
CONFORMANCE_DELAY_LEVELS = "1s 2s 3s 1s 2s 3s 1s 2s 3s 1s 2s 3s 1s 2s 3s 1s 2s 3s"
#: The 5.x retry table: a group's customized retry policy on RocketMQ and the delay table
#: of rmqcompat.v5 (attempt n waits level n). Its steps (4 s) are wider than the spread of
#: RocketMQ's revive lag (2-4.5 s on a loaded machine), so a wait one level off shows.
V5_DELAY_LEVELS = " ".join(["1s 5s 9s"] * 6)
#: Transactions: how often the broker checks, how old a half must be, how many checks.
TRANSACTION_CHECK_INTERVAL_MS = 1000
TRANSACTION_TIMEOUT_MS = 1000
TRANSACTION_CHECK_MAX = 3
#: Per process, the (file under the home, line) that say it is ready. The proxy says so
#: before its broker has registered with the name server (which the 4.x driver needs).
_READY = {
    "namesrv": (("namesrv.out", "boot success"),),
    "proxy": (
        ("proxy.out", "startup successfully"),
        ("logs/rocketmqlogs/broker.log", "Registering current broker to name server completed"),
    ),
}
#: The shortest invisible time the proxy accepts on receive (its default is 10 s): a
#: SimpleConsumer scenario runs with invisible times of a few seconds, as on rmqcompat.
MIN_INVISIBLE_MS = 1000
_START_TIMEOUT_S = 90.0
_JVM = ("-Xms128m", "-XX:+UseG1GC", "-Djava.awt.headless=true")
#: The proxy's JVM holds the broker too.
_HEAP = {"namesrv": "-Xmx256m", "proxy": "-Xmx768m"}


class ReferenceBootError(Exception):
    """The name server or the broker did not boot (a failure, never a reason to skip)."""


class ReferenceBroker:
    """A running RocketMQ name server and proxy (with its broker); ``namesrv`` is the name
    server's ``host:port``, ``grpc`` the proxy's."""

    def __init__(self) -> None:
        # Java and the jars first: without them no temporary store is left behind
        self.java = java()
        self.jars = rocketmq_jars()
        self._home = Path(tempfile.mkdtemp(prefix="rocketmq-ref-"))
        self._processes: list[subprocess.Popen[bytes]] = []
        self.namesrv = f"{HOST}:{free_port()}"
        self.grpc = f"{HOST}:{free_port()}"

    def start(self) -> None:
        """Start the name server, then the proxy and its broker; raise if either does not
        boot."""
        try:
            namesrv_port = self.namesrv.rsplit(":", 1)[1]
            conf = self._write("namesrv.conf", {"listenPort": namesrv_port})
            self._spawn("namesrv", "org.apache.rocketmq.namesrv.NamesrvStartup", "-c", conf)
            broker = self._write("broker.conf", self._broker_settings())
            proxy = self._home / "rmq-proxy.json"
            proxy.write_text(json.dumps(self._proxy_settings()), encoding="utf-8")
            main = "org.apache.rocketmq.proxy.ProxyStartup"
            self._spawn("proxy", main, "-pc", proxy, "-pm", "local", "-bc", broker)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """SIGKILL both JVMs and delete the store."""
        for process in self._processes:
            if process.poll() is None:
                os.kill(process.pid, signal.SIGKILL)
                process.wait()
        self._processes.clear()
        shutil.rmtree(self._home, ignore_errors=True)

    def _broker_settings(self) -> dict[str, str]:
        store = self._home / "store"
        return {
            "brokerClusterName": "conformance",
            "brokerName": "broker-a",
            "brokerId": "0",
            "namesrvAddr": self.namesrv,
            "brokerIP1": HOST,
            "listenPort": str(free_port()),
            "storePathRootDir": str(store),
            "storePathCommitLog": str(store / "commitlog"),
            "flushDiskType": "ASYNC_FLUSH",
            "mappedFileSizeCommitLog": str(64 * 1024 * 1024),
            # the driver creates its topics; a send to a missing one must fail, as on Kafka
            "autoCreateTopicEnable": "false",
            "autoCreateSubscriptionGroup": "true",
            "messageDelayLevel": CONFORMANCE_DELAY_LEVELS,
            "transactionCheckInterval": str(TRANSACTION_CHECK_INTERVAL_MS),
            "transactionTimeOut": str(TRANSACTION_TIMEOUT_MS),
            "transactionCheckMax": str(TRANSACTION_CHECK_MAX),
            "diskMaxUsedSpaceRatio": "95",
            # delivery times (RocketMQ 5's timer) to 100 ms rather than 1 s slots
            "timerPrecisionMs": "100",
        }

    def _proxy_settings(self) -> dict[str, object]:
        return {
            "rocketMQClusterName": "conformance",
            "namesrvAddr": self.namesrv,
            "grpcServerPort": int(self.grpc.rsplit(":", 1)[1]),
            "remotingListenPort": free_port(),
            "minInvisibleTimeMillsForRecv": MIN_INVISIBLE_MS,
        }

    def _write(self, name: str, settings: dict[str, str]) -> Path:
        path = self._home / name
        path.write_text("".join(f"{k}={v}\n" for k, v in settings.items()), encoding="utf-8")
        return path

    def _spawn(self, name: str, main: str, *args: str | Path) -> None:
        log = self._home / f"{name}.out"
        argv = [self.java, *_JVM, _HEAP[name], *self.system_properties()]
        argv += ["-cp", str(self.jars / "*")]
        argv += [main, *map(str, args)]
        with log.open("wb") as out:
            process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=child_env(),
            )
        self._processes.append(process)
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not all(line in _text(self._home / file) for file, line in _READY[name]):
            if process.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-3000:]
                raise ReferenceBootError(f"RocketMQ {name} did not boot: {tail}")
            time.sleep(0.1)

    def system_properties(self) -> list[str]:
        """JVM properties every RocketMQ JVM here needs (home, logs and temp in the store)."""
        return [
            f"-Drocketmq.home.dir={self._home}",
            f"-Duser.home={self._home}",
            f"-Djava.io.tmpdir={self._home}",
        ]


def _text(path: Path) -> str:
    """The file's text, empty while it does not exist."""
    return path.read_text(errors="replace") if path.exists() else ""
