"""A chat-completions server on 127.0.0.1 (loopback only) for the tests of the OpenAI-compatible backend.

It plays a script of answers, one entry per request, then answers normally ("images: N", N = the image parts of
the request). Script entries:

* ``("status", code, message, headers)``: an error answer ``{"error": {"message": ...}}``; with ``echo`` the
  message ends with the request's headers, as some servers do;
* ``("slow", seconds)``: the normal answer, that much later;
* ``("content", value)``: a 200 whose message content is ``value`` (``None``, a list, a string);
* ``("raw", code, body)``: those bytes as the body;
* ``("big", n)``: a 200 whose content is ``n`` characters, sent in pieces as the client reads;
* ``("hang",)``: no answer at all until the server closes;
* ``("trickle", interval)``: ``HTTP/1.1 200 OK``, then a header ``X-Slow:`` whose value never ends, one byte every
  ``interval`` seconds until the server closes (each read is short, the head never completes);
* ``("detail", code, detail)``: FastAPI's error shape ``{"detail": detail}``;
* ``("text", code, text)``: a plain-text error body;
* ``("drip", pieces, interval)``: the answer ``"".join(pieces)``, streamed one piece every ``interval`` seconds
  (sent whole, that much later, to a request that does not stream);
* ``("stall", pieces)``: a stream that sends ``pieces``, then nothing until the server closes;
* ``("sse", data)``: those bytes as a ``text/event-stream`` body.

A request with ``"stream": true`` is answered as server-sent events, as OpenAI's chat completions stream (a first
chunk with the role, the answer in pieces, a chunk with ``finish_reason``, one with ``usage``, ``data: [DONE]``),
unless ``streams`` is False (the request is answered whole, as a server that ignores ``stream`` does) or
``"refuse"`` (HTTP 422 in FastAPI's shape, as a server that does not know the field does).
``latency``: seconds every answer waits; ``peak`` is the most requests it handled at once. ``models``: the ids
``GET /v1/models`` lists, or whole entries as dicts (``{"id": ..., "root": ..., "created": ...}``); None: that
route answers 404, as a bare server does; ``"hang"``: it never answers. It may be changed while the server runs.
Every request is kept in ``requests`` (path, headers, body).
"""
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["ChatServer"]


class ChatServer:
    def __init__(self, script=(), reject_images=None, hang_up=False, latency=0.0, models=None, echo=False,  # noqa: C901
                 repeat=None, streams=True):
        """``repeat``: the entry played once the script is used up (default: the normal answer)."""
        self.script, self.reject_images, self.latency, self.models = list(script), reject_images, latency, models
        self.echo, self.repeat, self.streams = echo, repeat, streams
        self.requests, self.lock = [], threading.Lock()
        self.active = self.peak = 0
        self.closed = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args):
                pass

            def do_GET(self):
                if server.models == "hang":
                    server.closed.wait()
                    return
                listing = server.models is not None and self.path == "/v1/models"
                cards = [m if isinstance(m, dict) else {"id": m, "object": "model"} for m in server.models or ()]
                data = json.dumps({"object": "list", "data": cards}
                                  if listing else {"error": {"message": "not found"}}).encode()
                self._send(200 if listing else 404, data, {})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                    step = server.script.pop(0) if server.script else server.repeat
                    server.active += 1
                    server.peak = max(server.peak, server.active)
                time.sleep(server.latency)
                with server.lock:
                    server.active -= 1
                images = sum(p["type"] == "image_url" for p in body["messages"][-1]["content"])
                kind = step[0] if step else None
                stream = bool(body.get("stream")) and server.streams is True
                if body.get("stream") and server.streams == "refuse":
                    step, kind = ("detail", 422, "Unexpected fields in the request: {'stream', 'stream_options'}"), "detail"
                if kind in ("hang", "trickle"):  # no answer, or a head that never ends
                    return self._trickle(step[1]) if kind == "trickle" else server.closed.wait() and None
                if kind == "slow":
                    time.sleep(step[1])
                    step = kind = None
                if step is None and images == server.reject_images:
                    step, kind = ("status", 400, f"too many images: {images}", {}), "status"
                if kind == "detail":
                    return self._send(step[1], json.dumps({"detail": step[2]}).encode(), {})
                if kind == "text":
                    return self._send(step[1], step[2].encode(), {}, "text/plain; charset=utf-8")
                if kind == "sse":
                    return self._stream([step[1]])
                if kind in ("drip", "stall"):
                    pieces, interval = step[1], (step[2] if kind == "drip" else 0.0)
                    if not stream:
                        time.sleep(interval * len(pieces))
                        step, kind = ("content", "".join(pieces)), "content"
                    else:
                        return self._stream([_chunk({"role": "assistant"})]
                                            + [_chunk({"content": p}) for p in pieces]
                                            + ([] if kind == "stall" else [_chunk({}, "stop"), b"data: [DONE]\n\n"]),
                                            interval, hang=kind == "stall")
                if kind == "big":
                    return self._send_big(step[1])
                if kind == "raw":
                    return self._send(step[1], step[2], {})
                if kind == "status":
                    _, code, message, headers = step
                    if server.echo:
                        message = f"{message}; the request's headers were {dict(self.headers)}"
                    return self._send(code, json.dumps({"error": {"message": message, "type": "test"}}).encode(),
                                      headers)
                content = step[1] if kind == "content" else f"images: {images}"
                if stream:
                    pieces = [content[:3], content[3:]] if isinstance(content, str) else [content]
                    return self._stream([_chunk({"role": "assistant"})] + [_chunk({"content": p}) for p in pieces]
                                        + [_chunk({}, "stop"), _usage(), b"data: [DONE]\n\n"])
                payload = {"choices": [{"index": 0, "finish_reason": "stop",
                                        "message": {"role": "assistant", "content": content}}]}
                self._send(200, json.dumps(payload).encode(), {})

            def _stream(self, events, interval=0.0, hang=False):
                """``events`` as a chunked ``text/event-stream`` body, ``interval`` seconds before each."""
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    for event in events:
                        time.sleep(interval)
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                        self.wfile.flush()
                    if hang:
                        server.closed.wait()
                        return
                    self.wfile.write(b"0\r\n\r\n")
                except OSError:  # the client gave up waiting
                    self.close_connection = True

            def _trickle(self, interval):
                self.close_connection = True
                self.wfile.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
                while not server.closed.wait(interval):
                    try:
                        self.wfile.write(b"x")
                        self.wfile.flush()
                    except OSError:  # the client gave up
                        return

            def _send(self, code, data, headers, kind="application/json"):
                try:
                    self.send_response(code)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Type", kind)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    self.close_connection = hang_up  # closes a kept-alive connection without saying so
                except OSError:  # the client gave up waiting
                    pass

            def _send_big(self, n):
                head = b'{"choices": [{"index": 0, "message": {"role": "assistant", "content": "'
                tail = b'"}}]}'
                piece = b"x" * (1 << 20)
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(head) + n + len(tail)))
                    self.end_headers()
                    self.wfile.write(head)
                    for start in range(0, n, len(piece)):
                        self.wfile.write(piece[:min(len(piece), n - start)])
                    self.wfile.write(tail)
                except OSError:  # the client stopped reading
                    self.close_connection = True

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def close(self):
        self.closed.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def _chunk(delta, finish=None):
    """One ``data:`` event of a streamed chat completion."""
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return b"data: " + json.dumps({"object": "chat.completion.chunk", "choices": [choice]}).encode() + b"\n\n"


def _usage():
    return b"data: " + json.dumps({"object": "chat.completion.chunk", "choices": [],
                                   "usage": {"prompt_tokens": 10, "completion_tokens": 3}}).encode() + b"\n\n"


class RecordingProxy:
    """A loopback proxy in front of a real server: keeps each request (path, JSON body) and the answer's status and
    ``Content-Type`` in ``requests``, and relays the answer as it comes (a stream piece by piece)."""

    def __init__(self, upstream: str):
        import httpx

        self.requests, self.lock = [], threading.Lock()
        client = httpx.Client(trust_env=False, timeout=httpx.Timeout(600, connect=10))
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                self._relay(None)

            def do_POST(self):
                self._relay(self.rfile.read(int(self.headers["Content-Length"])))

            def _relay(self, data):
                record = {"path": self.path, "body": json.loads(data) if data else None}
                headers = {"Content-Type": "application/json"} if data else {}
                with client.stream(self.command, upstream + self.path, content=data, headers=headers) as answer:
                    record.update(status=answer.status_code, content_type=answer.headers.get("Content-Type", ""))
                    with proxy.lock:
                        proxy.requests.append(record)
                    self.send_response(answer.status_code)
                    self.send_header("Content-Type", record["content_type"])
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    for piece in answer.iter_raw():
                        if piece:
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                            self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
