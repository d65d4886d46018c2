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


class _Stream:
    """A network stream whose reads wait no longer than the thread's deadline; the rest is httpcore's own stream."""

    def __init__(self, inner: httpcore.NetworkStream):
        self._inner = inner

    def __getattr__(self, name: str):  # write, close, get_extra_info
        return getattr(self._inner, name)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        deadline = getattr(_local, "deadline", None)
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise httpcore.ReadTimeout("the response head did not arrive whole in time")
            timeout = left if timeout is None else min(timeout, left)
        return self._inner.read(max_bytes, timeout)

    def start_tls(self, *args, **kwargs) -> _Stream:
        return _Stream(self._inner.start_tls(*args, **kwargs))


class _Backend(httpcore.SyncBackend):
    """httpcore's sync backend, its TCP streams (the only ones an httpx transport without ``uds`` opens) wrapped
    in :class:`_Stream`."""

    def connect_tcp(self, *args, **kwargs) -> _Stream:
        return _Stream(super().connect_tcp(*args, **kwargs))


def transport(limits: httpx.Limits) -> httpx.HTTPTransport:
    """An httpx transport whose reads keep :func:`head_within`'s deadline (and otherwise behave as httpx's).

    httpx's transport over a connection pool whose network backend is :class:`_Backend`: the pool is the one
    ``httpx.HTTPTransport.__init__`` makes without a proxy (``httpx/_transports/default.py``, 0.28), rebuilt with
    that backend and no proxy, no ``.netrc`` and no certificate from the environment."""
    made = httpx.HTTPTransport(limits=limits, trust_env=False)
    made._pool = httpcore.ConnectionPool(
        ssl_context=httpx.create_ssl_context(trust_env=False), max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections, keepalive_expiry=limits.keepalive_expiry,
        network_backend=_Backend())
    return made
