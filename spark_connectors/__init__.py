"""Spark side of rmqcompat: Kafka reading and the audit jobs (arrive with the audit issue)."""
