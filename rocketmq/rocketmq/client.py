"""``rocketmq.client``: rmqcompat's 4.x drop-in (:mod:`rmqcompat.client`)."""

from rmqcompat.v5.shim import refuse_upstream

refuse_upstream()

from rmqcompat.client import *  # noqa: E402, F403
from rmqcompat.client import __all__  # noqa: E402, F401
