"""The start/stop life cycle of dev brokers and clusters, and its context-manager form."""

from __future__ import annotations

from typing import Self


class StartStop:
    """Something started once and stopped once; ``with`` does both.

    Subclasses implement :meth:`start` (returning the bootstrap servers) and :meth:`stop`.
    """

    def start(self) -> str:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()
