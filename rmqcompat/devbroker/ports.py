"""Loopback ports for dev brokers."""

from __future__ import annotations

import socket

from rmqcompat.devbroker.errors import DevBrokerError

HOST = "127.0.0.1"


def free_port() -> int:
    """Return a TCP port on the loopback interface that is free right now.

    Another process may take it before it is used; starting a broker on it fails clearly then.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def port_is_free(port: int) -> bool:
    """Whether ``port`` can be bound on loopback now (sockets in TIME_WAIT do not count)."""
    # SO_REUSEADDR as the brokers themselves bind: sockets in TIME_WAIT from a previous run
    # on this port must not count as "in use" on restart.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
        return True


def ensure_port_free(port: int) -> None:
    """Raise :class:`DevBrokerError` if ``port`` cannot be bound on loopback."""
    if not port_is_free(port):
        raise DevBrokerError(f"port {HOST}:{port} is not free for the dev broker")


def accepts_connections(port: int) -> bool:
    """Whether something accepts TCP connections on ``127.0.0.1:port``."""
    try:
        with socket.create_connection((HOST, port), timeout=0.5):
            return True
    except OSError:
        return False
