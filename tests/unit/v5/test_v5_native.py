"""What a 5.x consumer asks of its core consumers (no I/O: constructors only)."""

from __future__ import annotations

from rmqcompat.v5 import ClientConfiguration, FilterExpression, PushConsumer
from rmqcompat.v5.native import CoreLimits, core_consumer
from rmqcompat.v5.push import ConsumeResult, MessageListener


class _Ok(MessageListener):
    def consume(self, message):
        return ConsumeResult.SUCCESS


def test_limits_become_the_core_settings_and_the_hold_never_times_out():
    config = ClientConfiguration("127.0.0.1:1")
    core = core_consumer(config, "G", "T", "A || B", print, CoreLimits(7, 17, 1024, 64.0))
    s = core.settings
    assert (s.consume_thread_max, s.max_reconsume_times) == (7, 16)  # 17 attempts
    assert (s.pull_threshold_for_queue, s.pull_threshold_size_for_queue) == (1024, 64.0)
    assert s.consume_timeout_s >= 7 * 24 * 3600  # a held message is the lease's business
    assert s.consume_concurrently_max_span == 65535


def test_push_consumer_cache_settings_are_its_flow_control_thresholds():
    config = ClientConfiguration("127.0.0.1:1")
    consumer = PushConsumer(config, "G", _Ok(), {"T": FilterExpression()}, 10, 2 * 1024 * 1024)
    assert consumer.limits == CoreLimits(20, 17, 10, 2.0)
