"""``rocketmq.consts``: rmqcompat's 4.x drop-in (:mod:`rmqcompat.consts`)."""

from rmqcompat.v5.shim import refuse_upstream

refuse_upstream()

from rmqcompat.consts import *  # noqa: E402, F403
