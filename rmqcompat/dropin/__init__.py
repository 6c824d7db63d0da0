"""The implementation behind ``rmqcompat.client`` (apache/rocketmq-client-python's API)."""
