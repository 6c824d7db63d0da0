"""Transactional vocabulary (RocketMQ 4.x names, snake_case) and the check settings."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Protocol

from rmqcompat.errors import ConfigError
from rmqcompat.message import MessageExt


class LocalTransactionState(enum.Enum):
    """What the local transaction (or a check of it) decided for a half message.

    ``UNKNOW`` keeps RocketMQ's spelling: the check service asks again later.
    """

    COMMIT_MESSAGE = "COMMIT_MESSAGE"
    ROLLBACK_MESSAGE = "ROLLBACK_MESSAGE"
    UNKNOW = "UNKNOW"


class TransactionListener(Protocol):
    """RocketMQ's ``TransactionListener``.

    ``execute_local_transaction`` runs on the sending thread right after the half message
    is stored; ``check_local_transaction`` runs on the check service's thread for a half
    message still undecided. Anything but a :class:`LocalTransactionState` (None, an
    exception) counts as ``UNKNOW`` and is logged.
    """

    def execute_local_transaction(self, msg: MessageExt, arg: Any) -> LocalTransactionState: ...

    def check_local_transaction(self, msg: MessageExt) -> LocalTransactionState: ...


@dataclass(frozen=True)
class CheckSettings:
    """When the check service asks the producer group about an undecided half message.

    Defaults are the RocketMQ broker's: the first check once the half message is
    ``check_immunity_time_s`` old (``transactionTimeOut``, 6 s; a message's
    ``CHECK_IMMUNITY_TIME_IN_SECONDS`` property may lengthen it), then every
    ``check_interval_s`` (``transactionCheckInterval``, 60 s); after ``check_max``
    checks (``transactionCheckMax``, 15) without a decision it is rolled back.
    ``poll_interval_s`` bounds how late a due check runs.

    Raises:
        ConfigError: a value is out of range.
    """

    check_immunity_time_s: float = 6.0
    check_interval_s: float = 60.0
    check_max: int = 15
    poll_interval_s: float = 0.2

    def __post_init__(self) -> None:
        for name in ("check_immunity_time_s", "check_interval_s", "poll_interval_s"):
            if not getattr(self, name) > 0:
                raise ConfigError(f"{name} must be > 0, not {getattr(self, name)}")
        if isinstance(self.check_max, bool) or self.check_max < 0:
            raise ConfigError(f"check_max must be >= 0, not {self.check_max}")

    @property
    def immunity_ms(self) -> int:
        return int(self.check_immunity_time_s * 1000)

    @property
    def interval_ms(self) -> int:
        return int(self.check_interval_s * 1000)
