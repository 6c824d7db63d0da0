"""forwarder"""
