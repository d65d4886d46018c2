"""A response head that must arrive whole within a time, whatever the server sends meanwhile.

httpx bounds each read (``httpx.Timeout(read=...)``), not the time until a response's head is complete: a server
that sends one byte of its header a second keeps every read short and the request waiting for ever. Here every
read of a connection made by :func:`transport` first asks the thread's deadline (set by :func:`head_within`) and
waits at most until it, so a head still incomplete at the deadline ends the request with ``httpx.ReadTimeout``.

::

    client = httpx.Client(transport=transport(limits))
    with contextlib.ExitStack() as stack:
        with head_within(20.0):  # the status line and headers within 20 s of sending
            response = stack.enter_context(client.stream("POST", url, content=body))
        ...  # the body: read under the client's own timeouts

The deadline is per thread (a sync client sends each request in its caller's thread) and is cleared on leaving
``head_within``. The reads are httpcore's own (``httpcore.SyncBackend``); this module wraps its network backend
(``httpcore.ConnectionPool(network_backend=...)``, httpcore's public parameter for it).
"""
from __future__ import annotations

import contextlib
import threading
import time

import httpcore
import httpx

__all__ = ["head_within", "transport"]

_local = threading.local()


@contextlib.contextmanager
def head_within(seconds: float):
    """Reads of this thread's connections end by ``seconds`` from now while the block runs (``httpx.ReadTimeout``
    when the deadline passes)."""
    _local.deadline = time.monotonic() + seconds
    try:
        yield
    finally:
        _local.deadline = None


class _Stream(httpcore.NetworkStream):
    """A network stream whose reads wait no longer than the thread's deadline."""

    def __init__(self, inner: httpcore.NetworkStream):
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        deadline = getattr(_local, "deadline", None)
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise httpcore.ReadTimeout("the response head did not arrive whole in time")
            timeout = left if timeout is None else min(timeout, left)
        return self._inner.read(max_bytes, timeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, timeout)

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context, server_hostname=None, timeout=None) -> httpcore.NetworkStream:
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str):
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    """httpcore's sync backend, its streams wrapped in :class:`_Stream`."""

    def __init__(self):
        self._inner = httpcore.SyncBackend()

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        return _Stream(self._inner.connect_tcp(host, port, timeout, local_address, socket_options))

    def connect_unix_socket(self, path, timeout=None, socket_options=None):
        return _Stream(self._inner.connect_unix_socket(path, timeout, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _Transport(httpx.HTTPTransport):
    """httpx's transport over a connection pool whose network backend is :class:`_Backend`: the pool is the one
    ``httpx.HTTPTransport.__init__`` makes without a proxy (``httpx/_transports/default.py``, 0.28), rebuilt with
    that backend and no proxy, no ``.netrc`` and no certificate from the environment."""

    def __init__(self, limits: httpx.Limits):
        super().__init__(limits=limits, trust_env=False)
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(trust_env=False), max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections, keepalive_expiry=limits.keepalive_expiry,
            network_backend=_Backend())


def transport(limits: httpx.Limits) -> httpx.HTTPTransport:
    """An httpx transport whose reads keep :func:`head_within`'s deadline (and otherwise behave as httpx's)."""
    return _Transport(limits)
