"""The Java runtime on this machine, as the JVMs rmqcompat starts would find it (the Kafka
dev broker, Spark's launcher)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def java_on_path() -> str | None:
    """The ``java`` that runs here, unchecked: ``$JAVA_HOME/bin/java`` when set, else the
    one on PATH (as Spark's launcher picks it); None if there is none."""
    java_home = os.environ.get("JAVA_HOME")
    candidate = Path(java_home) / "bin" / "java" if java_home else None
    return str(candidate) if candidate and os.access(candidate, os.X_OK) else shutil.which("java")
