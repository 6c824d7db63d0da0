"""Run ``mypy --strict`` (settings in pyproject.toml) on rmqcompat as it is installed.

The distribution maps folders with setuptools ``package-dir`` (``topics/`` ->
``rmqcompat.topics``, ``cli/`` -> ``rmqcompat.cli``, ``spark_connectors/`` ->
``rmqcompat.spark``); an editable install serves that mapping through an import hook that
mypy cannot follow. So this script mirrors the installed layout as a tree of symlinks under
``build/typecheck/`` (git-ignored), built fresh from pyproject.toml's mapping on every run,
type-checks ``-p rmqcompat`` there and prints mypy's report with paths of the source tree.

    .venv/bin/python scripts/typecheck.py [extra mypy arguments]

Exit status: mypy's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREE = ROOT / "build" / "typecheck"
PACKAGE = "rmqcompat"


def package_dirs() -> dict[str, Path]:
    """Each installed package -> its source folder, from ``[tool.setuptools] package-dir``."""
    with (ROOT / "pyproject.toml").open("rb") as f:
        mapping: dict[str, str] = tomllib.load(f)["tool"]["setuptools"]["package-dir"]
    return {name: ROOT / folder for name, folder in mapping.items()}


def build_tree(dirs: dict[str, Path]) -> dict[Path, Path]:
    """Symlink every module into ``TREE``; returns tree folder -> source folder."""
    shutil.rmtree(TREE, ignore_errors=True)
    folders: dict[Path, Path] = {}
    # Parents first, so a mapped subpackage replaces the link its parent folder may hold.
    for name in sorted(dirs, key=lambda n: n.count(".")):
        target = TREE.joinpath(*name.split("."))
        target.mkdir(parents=True, exist_ok=True)
        folders[target] = dirs[name]
        for entry in dirs[name].iterdir():
            if entry.name == "__pycache__" or (target / entry.name).exists():
                continue
            (target / entry.name).symlink_to(entry)
    return folders


def to_source_paths(report: str, folders: dict[Path, Path]) -> str:
    # Longest tree folder first: rmqcompat/topics/ before rmqcompat/.
    for tree_dir in sorted(folders, key=lambda p: len(p.parts), reverse=True):
        source = os.path.relpath(folders[tree_dir], ROOT)
        report = report.replace(f"{os.path.relpath(tree_dir, ROOT)}{os.sep}", f"{source}{os.sep}")
    return report


def main() -> int:
    dirs = {n: p for n, p in package_dirs().items() if n.split(".")[0] == PACKAGE}
    folders = build_tree(dirs)
    mypy = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml")]
    env = {**os.environ, "MYPYPATH": str(TREE)}
    run = subprocess.run(  # noqa: S603 - fixed command line, our own interpreter
        [*mypy, "-p", PACKAGE, *sys.argv[1:]],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    sys.stdout.write(to_source_paths(run.stdout, folders))
    sys.stderr.write(to_source_paths(run.stderr, folders))
    return run.returncode


if __name__ == "__main__":
    raise SystemExit(main())
