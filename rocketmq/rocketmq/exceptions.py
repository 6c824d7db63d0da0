"""``rocketmq.exceptions``: rmqcompat's 4.x drop-in (:mod:`rmqcompat.exceptions`)."""

from rmqcompat.v5.shim import refuse_upstream

refuse_upstream()

from rmqcompat.exceptions import *  # noqa: E402, F403
