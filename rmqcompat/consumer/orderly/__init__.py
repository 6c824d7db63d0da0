"""Orderly consumption (RocketMQ's ``MessageListenerOrderly``): one listener call per
partition at a time, a failed batch retried in place after a suspension, dead-lettered at
the reconsume limit.

- :mod:`.service`: the consume service the engine runs (:class:`OrderlyConsumeService`).
- :mod:`.queue`: a partition's messages in order, taken and given back per batch.
- :mod:`.workers`: the threads that run listener calls, one partition each at a time.
- :mod:`.rules`: the pure rules (suspension, reconsume counts, when to dead-letter).
- :mod:`.dead_letter`: what a message at its limit becomes.
"""

from rmqcompat.consumer.orderly.service import OrderlyConsumeService, orderly_policy

__all__ = ["OrderlyConsumeService", "orderly_policy"]
