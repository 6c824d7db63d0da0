"""``rocketmq``: Apache RocketMQ's Python client APIs served by rmqcompat on Kafka.

``from rocketmq import Producer, SimpleConsumer, ...`` (and ``rocketmq.v5.*`` where
upstream's examples import from) gives :mod:`rmqcompat.v5`; ``rocketmq.client``,
``rocketmq.exceptions`` and ``rocketmq.consts`` give the 4.x drop-in. Refuses to load
beside an upstream client (see :mod:`rmqcompat.v5.shim`).
"""

from rmqcompat.v5.shim import alias_submodules, refuse_upstream

refuse_upstream()
alias_submodules()

from rmqcompat.v5 import *  # noqa: E402, F403
from rmqcompat.v5 import RMQCOMPAT_SHIM, __all__  # noqa: E402, F401
