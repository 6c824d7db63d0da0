"""Apache RocketMQ's jars and the compiled Java driver, fetched and built once per machine.

The jars (name server, broker, proxy, tools, the 4.x Java client and their runtime
dependencies, about 150 files) are resolved from Maven Central with Maven into
``rmqcompat.cache.cache_root() / "rocketmq-<version>"``, as the Kafka dev broker fetches
Kafka's, in a folder named after a digest of the pom (a changed pom resolves anew). The
Java sources beside this file (``Driver.java``, the 4.x driver; ``Setup5.java``, which
creates a 5.x scenario's topics and group) are compiled with ``javac`` against them into
a folder named after a digest of the sources, so an edit recompiles them and unchanged
sources are never rebuilt. The 5.x driver (``driver5.py``) runs in a virtual environment
of its own beside them, holding the official ``rocketmq-python-client`` (it installs the
``rocketmq`` import name, which this repository's shim also owns).
"""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from rmqcompat.cache import cache_root
from rmqcompat.devbroker.apache_kafka import KafkaRuntimeError, java_executable, run_tool
from rmqcompat.java import java_on_path

ROCKETMQ_VERSION = "5.5.0"
_HERE = Path(__file__).parent
_POM = _HERE / "rocketmq-runtime.pom.xml"
JAVA_SOURCES = (_HERE / "Driver.java", _HERE / "Setup5.java")
#: The official RocketMQ 5 Python client the 5.x reference runs on.
PYTHON_CLIENT = "rocketmq-python-client==5.1.2"
_VENV_TIMEOUT_S = 600.0
_COMPLETE = "complete"
_RESOLVE_TIMEOUT_S = 900.0
_COMPILE_TIMEOUT_S = 300.0
_NEEDS_JAVA = "the conformance suite needs a JDK 17+ (java, javac) and, once, Maven"


class ReferenceUnavailableError(Exception):
    """Java, javac, Maven or the RocketMQ jars are missing: the message says which."""


def rocketmq_jars() -> Path:
    """The folder of RocketMQ's jars, resolved from Maven Central on first use."""
    digest = hashlib.sha256(_POM.read_bytes()).hexdigest()[:16]
    jars = cache_root() / f"rocketmq-{ROCKETMQ_VERSION}" / f"jars-{digest}"
    _once(jars, _resolve_into)
    return jars


def compiled_driver(jars: Path) -> Path:
    """The folder of the compiled Java classes, compiling :data:`JAVA_SOURCES` if this
    version of them was never compiled here."""
    digest = hashlib.sha256(b"".join(s.read_bytes() for s in JAVA_SOURCES)).hexdigest()[:16]
    classes = jars.parent / f"driver-{digest}"
    _once(classes, lambda into: compile_sources(jars, JAVA_SOURCES, into))
    return classes


def reference_python(jars: Path) -> Path:
    """The Python of a virtual environment holding :data:`PYTHON_CLIENT`, created with
    this interpreter's ``venv`` and pip (from PyPI) on first use."""
    name = hashlib.sha256(PYTHON_CLIENT.encode()).hexdigest()[:8]
    venv = jars.parent / f"python-client-{name}"
    _once(venv, _make_venv)
    return venv / "bin" / "python"


def _make_venv(venv: Path) -> None:
    shutil.rmtree(venv, ignore_errors=True)
    steps = (
        [sys.executable, "-m", "venv", str(venv)],
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", PYTHON_CLIENT],
    )
    for argv in steps:
        result = run_tool(argv, _VENV_TIMEOUT_S)
        if result.returncode != 0:
            raise ReferenceUnavailableError(
                f"could not install {PYTHON_CLIENT} for the 5.x reference "
                f"(`{' '.join(argv[-3:])}` exit {result.returncode}): {result.stderr[-2000:]}"
            )


def _once(target: Path, make: Callable[[Path], None]) -> None:
    """Make ``target`` with ``make(target)`` unless a previous run completed it; several
    processes at once: one makes it, the others wait on the lock and find it made."""
    target.parent.mkdir(parents=True, exist_ok=True)
    marker = target.parent / f"{target.name}.{_COMPLETE}"
    with (target.parent / f"{target.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not marker.exists():
            make(target)
            marker.write_text(ROCKETMQ_VERSION + "\n")


def compile_sources(jars: Path, sources: Sequence[Path], classes: Path) -> None:
    """Compile Java ``sources`` against RocketMQ's ``jars`` into ``classes`` (emptied first)."""
    javac = _tool("javac", "compile Java drivers against RocketMQ's client (install a JDK 17+)")
    shutil.rmtree(classes, ignore_errors=True)
    argv = [javac, "-d", str(classes), "-cp", str(jars / "*"), *map(str, sources)]
    result = run_tool(argv, _COMPILE_TIMEOUT_S)
    if result.returncode != 0:
        names = ", ".join(source.name for source in sources)
        raise ReferenceUnavailableError(f"javac failed on {names}: {result.stderr}")


def java() -> str:
    """The ``java`` to run RocketMQ with (17+), or a clear :class:`ReferenceUnavailableError`."""
    if java_on_path() is None:
        raise ReferenceUnavailableError(_NEEDS_JAVA + ": no `java` on PATH")
    try:
        return java_executable()
    except KafkaRuntimeError as exc:  # too old, or it does not run
        raise ReferenceUnavailableError(f"{_NEEDS_JAVA}: {exc}") from exc


def _resolve_into(jars: Path) -> None:
    mvn = _tool("mvn", f"fetch Apache RocketMQ {ROCKETMQ_VERSION} from Maven Central once")
    with tempfile.TemporaryDirectory(prefix="resolve-", dir=jars.parent) as work:
        pom = Path(work) / "pom.xml"
        text = _POM.read_text(encoding="utf-8").replace("@ROCKETMQ_VERSION@", ROCKETMQ_VERSION)
        pom.write_text(text, encoding="utf-8")
        argv = [mvn, "-B", "-q", "-f", str(pom), "dependency:copy-dependencies"]
        result = run_tool(argv, _RESOLVE_TIMEOUT_S)
        resolved = Path(work) / "target" / "jars"
        wanted = resolved / f"rocketmq-broker-{ROCKETMQ_VERSION}.jar"
        if result.returncode != 0 or not wanted.exists():
            raise ReferenceUnavailableError(
                f"could not fetch Apache RocketMQ {ROCKETMQ_VERSION} from Maven Central "
                f"(mvn exit {result.returncode}): {result.stdout[-2000:]}{result.stderr[-2000:]}"
            )
        shutil.rmtree(jars, ignore_errors=True)
        resolved.rename(jars)


def _tool(name: str, why: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise ReferenceUnavailableError(f"the conformance suite needs `{name}` to {why}")
    return path
