"""The start/shutdown life cycle shared by every client, and its context-manager form."""

from __future__ import annotations

from typing import Any, Self


class Lifecycle:
    """A client that is started once and shut down once; ``with`` does both.

    Subclasses implement :meth:`start` and :meth:`shutdown`.
    """

    def start(self) -> Any:
        raise NotImplementedError

    def shutdown(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.shutdown()
