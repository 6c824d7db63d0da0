"""The delay-forwarder: moves parked records to their real topics when they are due."""

from rmqcompat.forwarder.service import DelayForwarder, ForwarderFailedError
from rmqcompat.forwarder.settings import forwarder_group

__all__ = ["DelayForwarder", "ForwarderFailedError", "forwarder_group"]
