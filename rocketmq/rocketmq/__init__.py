"""``rocketmq``: the RocketMQ 5 client API (``rocketmq-python-client``) served by rmqcompat.

``from rocketmq import Producer, SimpleConsumer, ...`` gives :mod:`rmqcompat.v5`;
``rocketmq.client`` gives the 4.x drop-in. Refuses to load beside an upstream client.
"""

from rmqcompat.v5.shim import refuse_upstream

refuse_upstream()

from rmqcompat.v5 import *  # noqa: E402, F403
from rmqcompat.v5 import RMQCOMPAT_SHIM, __all__  # noqa: E402, F401
