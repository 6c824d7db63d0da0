"""Every complete program in the README and the docs site runs against the test broker.

A fenced ``python`` block whose first line is the comment ``# runnable`` is a complete
program (docs/development.md, "This documentation"); other blocks are fragments and are
not run. Each program runs in a fresh interpreter, in an empty working directory, with
``RMQCOMPAT_BOOTSTRAP_SERVERS`` set to the session broker, and must exit 0 in time.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MARKER = "# runnable"
TIMEOUT_S = 120
_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```python[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
    re.MULTILINE | re.DOTALL,
)


@dataclass(frozen=True)
class Example:
    source: Path
    line: int
    code: str

    @property
    def name(self) -> str:
        return f"{self.source.relative_to(ROOT)}:{self.line}"


def _sources() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def runnable_examples(path: Path) -> list[Example]:
    """The ``# runnable`` python blocks of one Markdown file, with their first line."""
    text = path.read_text(encoding="utf-8")
    found = []
    for match in _FENCE.finditer(text):
        code = textwrap.dedent(match.group("body"))
        if code.lstrip().startswith(MARKER):
            line = text.count("\n", 0, match.start()) + 1
            found.append(Example(path, line, code))
    return found


EXAMPLES = [example for path in _sources() for example in runnable_examples(path)]


def test_the_readme_example_is_runnable() -> None:
    assert any(example.source.name == "README.md" for example in EXAMPLES)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda example: example.name)
def test_example_runs(example: Example, kafka_bootstrap: str, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(example.code, encoding="utf-8")
    env = {**os.environ, "RMQCOMPAT_BOOTSTRAP_SERVERS": kafka_bootstrap}
    try:
        done = subprocess.run(
            [sys.executable, str(script)],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{example.name} did not finish within {TIMEOUT_S} s: {exc.stderr!r}")
    assert done.returncode == 0, (
        f"{example.name} exited {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    )
