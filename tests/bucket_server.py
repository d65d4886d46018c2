"""A tiny object store on 127.0.0.1 for the fetch tests: GET and HEAD of keys, HTTP Range, and faults on demand.

``serve(objects)`` starts a threaded HTTP server in a daemon thread and yields a :class:`Bucket` whose ``url`` is
its base URL; leaving the ``with`` block shuts the server down and joins the thread. Faults, set on the bucket
before or during a run:

* ``cut[key] = n``: the next GET of ``key`` sends ``n`` bytes of its body, then closes the connection (once);
* ``forbid = True``: every request is answered 403;
* ``slow = (chunk, seconds)``: bodies go out ``chunk`` bytes at a time, ``seconds`` apart;
* ``endless[key] = "chunked"`` (or ``"with-length"``): a GET of ``key`` answers its status and range as usual, but
  its body is chunked (``"with-length"``: chunked, and still announcing the right ``Content-Length``) and goes on
  past the object's end, repeating it, until 64 MiB or the server shuts down; ``sent[key]`` counts its bytes;
* ``stall[key] = seconds``: a GET of ``key`` sends its first byte, then waits up to ``seconds`` (ended early by
  shutting down) before the rest.

Every answer carries the object's ``ETag`` (its MD5 in quotes, as S3 gives for an object uploaded in one part;
``etag[key]`` replaces it) and a ``Last-Modified``; a ranged GET whose ``If-Range`` is neither of them is answered
200 with the whole object, as HTTP says (RFC 9110, 13.1.5). ``requests`` records ``(method, key, Range header or
None)`` of every request, ``if_range`` the ``If-Range`` header of each ranged GET.
"""
from __future__ import annotations

import contextlib
import hashlib
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Bucket:
    def __init__(self, objects: dict[str, bytes]):
        self.objects = dict(objects)
        self.cut: dict[str, int] = {}
        self.stall: dict[str, float] = {}
        self.endless: dict[str, str] = {}
        self.etag: dict[str, str] = {}
        self.if_range: list[str | None] = []
        self.sent: dict[str, int] = {}
        self.forbid = False
        self.slow: tuple[int, float] | None = None
        self.requests: list[tuple[str, str, str | None]] = []
        self.closing = threading.Event()
        self.url = ""


class _Handler(BaseHTTPRequestHandler):
    bucket: Bucket  # set by serve()

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet
        pass

    def _key(self) -> str:
        return self.path.lstrip("/")

    def _answer(self, body: bool) -> None:
        key = self._key()
        self.bucket.requests.append((self.command, key, self.headers.get("Range")))
        if self.bucket.forbid:
            return self._empty(403)
        if key not in self.bucket.objects:
            return self._empty(404)
        data = self.bucket.objects[key]
        etag = self.bucket.etag.get(key, f'"{hashlib.md5(data).hexdigest()}"')
        modified = "Mon, 05 Mar 2018 13:20:00 GMT"
        start, status = 0, 200
        asked = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range") or "")
        if asked:
            self.bucket.if_range.append(self.headers.get("If-Range"))
            if self.headers.get("If-Range", etag) not in (etag, modified):
                asked = None  # the object changed: all of it
        if asked:
            start = int(asked.group(1))
            if start >= len(data):
                return self._empty(416)
            status = 206
        endless = self.bucket.endless.get(key) if body else None
        self.send_response(status)
        if endless != "chunked":
            self.send_header("Content-Length", str(len(data) - start))
        if endless:
            self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("ETag", etag)
        self.send_header("Last-Modified", modified)
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        self.end_headers()
        if endless:
            self._send_endless(key, data[start:] + data)
        elif body:
            self._send(key, data[start:])

    def _send_endless(self, key: str, payload: bytes) -> None:
        self.close_connection = True
        self.bucket.sent[key] = 0
        while self.bucket.sent[key] < 64 << 20 and not self.bucket.closing.is_set():
            self.wfile.write(b"%x\r\n%s\r\n" % (len(payload), payload))
            self.wfile.flush()
            self.bucket.sent[key] += len(payload)

    def _send(self, key: str, payload: bytes) -> None:
        cut = self.bucket.cut.pop(key, None)
        if cut is not None:
            self.wfile.write(payload[:cut])
            self.wfile.flush()
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(2)
            return
        if key in self.bucket.stall:
            self.wfile.write(payload[:1])
            self.wfile.flush()
            self.bucket.closing.wait(self.bucket.stall[key])
            payload = payload[1:]
        chunk, pause = self.bucket.slow or (len(payload) or 1, 0.0)
        for i in range(0, len(payload), chunk):
            self.wfile.write(payload[i:i + chunk])
            self.wfile.flush()
            if pause:
                time.sleep(pause)

    def _empty(self, status: int) -> None:
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):  # noqa: N802 - http.server's hook
        with contextlib.suppress(ConnectionError):
            self._answer(body=True)

    def do_HEAD(self):  # noqa: N802
        with contextlib.suppress(ConnectionError):
            self._answer(body=False)


@contextlib.contextmanager
def serve(objects: dict[str, bytes]):
    """A :class:`Bucket` serving ``objects`` (key -> bytes) at ``bucket.url`` while the block runs."""
    bucket = Bucket(objects)
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("Handler", (_Handler,), {"bucket": bucket}))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    bucket.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield bucket
    finally:
        bucket.closing.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
