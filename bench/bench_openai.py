"""Items/s of the ``openai`` backend through the runner at concurrency 1 and 16, without and with decoding.

A local chat-completions server on 127.0.0.1 answers every request after a
fixed 200 ms (at most 32 requests handled at once), standing in for a serving
engine (vLLM, SGLang) whose batch latency does not grow with the number of
requests; ``GET /v1/models`` lists the one model it serves, as such a server
does. Each item sends the 6 frames that the paper's sampler takes at
1 fps from a real 384x288 example excerpt (50 frames at 10 fps), JPEG-encoded per request as in a real run. The
first two rows decode the frames once, so they measure the backend and the runner; the third, at concurrency 16,
has the runner load every item from its file (decord, the runner's loader threads), as a real run does. Target:
concurrency 16 at least 10x the items/s of concurrency 1.

Then, as whole processes, alternated over ``--rounds`` rounds (the best of each kept): ``sova describe --backend
openai --videos DIR --concurrency 8`` over a folder of ``--items`` copies of the three excerpts, beside a bare client
in a fresh interpreter that opens each file with decord, reads the same frames, JPEG-encodes them as sova does and
posts the same JSON bodies (checked: every body the bare client sends equals one sova sent, apart from the
streaming fields) from 8 threads with httpx. Target: sova within 1.1x the bare client's time.

Run: ``python bench/bench_openai.py [--items 48] [--latency 0.2]`` (``--quick``: a few items, to check that it
runs)
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from sova_lib.describe.backends.openai import OpenAIDescriber
from sova_lib.describe.item import Item
from sova_lib.describe.prompts import resolve_prompt
from sova_lib.describe.run_cache import RunOptions
from sova_lib.describe.runner import LocalEngine, describe_items
from sova_lib.video.frames import example_videos, sample_frames

MAX_BODY = 64 << 20
MODEL = "bench/vlm"  # the model the server serves


def start_server(latency: float, max_handlers: int = 32, bodies: list | None = None) -> ThreadingHTTPServer:
    """The server; with ``bodies``, every request's parsed JSON body is appended to it."""
    slots = threading.BoundedSemaphore(max_handlers)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # as serving engines do: no 40 ms delayed-ACK stalls

        def log_message(self, *args):
            pass

        def do_GET(self):
            listing = self.path == "/v1/models"
            card = {"id": MODEL, "object": "model", "root": "/models/bench-vlm", "created": 1}
            data = json.dumps({"object": "list", "data": [card]} if listing else
                              {"error": {"message": f"no route {self.path}"}}).encode()
            self.send_response(200 if listing else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self):
            length = int(self.headers.get("Content-Length", 0))
            if length > MAX_BODY:
                self.send_error(413)
                return
            with slots:
                body = json.loads(self.rfile.read(length))
                if bodies is not None:
                    bodies.append(body)
                time.sleep(latency)
                images = sum(p["type"] == "image_url" for p in body["messages"][-1]["content"])
                data = json.dumps({"choices": [{"message": {"content": f"{images} frames seen."}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return server


# The bare client: argv[1] a JSON file of [[path, [frame numbers]], ...], the body template (without images) and
# the URL. Its own imports are timed with it; decord is imported with the nvidia packages hidden, as sova does.
BARE_CLIENT = """
import base64, io, json, sys
from concurrent.futures import ThreadPoolExecutor
sys.modules["nvidia"] = None
import decord
del sys.modules["nvidia"]
import httpx
from PIL import Image
work = json.load(open(sys.argv[1]))
client = httpx.Client(timeout=120)
def one(job):
    path, frames = job
    reader = decord.VideoReader(path, ctx=decord.cpu(0), num_threads=1)
    urls = []
    for array in reader.get_batch(frames).asnumpy():
        buf = io.BytesIO()
        Image.fromarray(array).save(buf, format="JPEG", quality=90)
        urls.append("data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii"))
    body = json.loads(json.dumps(work["template"]))
    body["messages"][-1]["content"][:0] = [{"type": "image_url", "image_url": {"url": u}} for u in urls]
    answer = client.post(work["url"] + "/chat/completions", content=json.dumps(body).encode())
    return answer.json()["choices"][0]["message"]["content"]
with ThreadPoolExecutor(8) as pool:
    print(len(list(pool.map(one, work["jobs"]))))
"""


def whole_process(args) -> None:
    """``sova describe --backend openai`` against the bare client, both as whole processes, alternated."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "videos"
        folder.mkdir()
        videos = example_videos()
        for k in range(args.items):
            shutil.copyfile(videos[k % len(videos)], folder / f"v{k:03d}.mp4")
        jobs = [[str(p), sample_frames(p, rate=1.0).source_indices.tolist()] for p in sorted(folder.iterdir())]
        sova_bodies, bare_bodies, best = [], [], {"sova": float("inf"), "bare client": float("inf")}
        for round_ in range(args.rounds):
            for name in best:
                bodies = sova_bodies if name == "sova" else bare_bodies
                server = start_server(args.latency, bodies=bodies if round_ == 0 else None)
                url = f"http://127.0.0.1:{server.server_address[1]}/v1"
                if name == "sova":
                    argv = [sys.executable, "-m", "sova_lib", "describe", "--backend", "openai", "--model", MODEL,
                            "--base-url", url, "--videos", str(folder), "--concurrency", "8", "--no-progress",
                            "--cache-dir", str(Path(tmp) / f"cache{round_}")]
                else:
                    template = json.loads(json.dumps(  # a copy: sova's bodies stay as they were sent
                        {k: v for k, v in sova_bodies[0].items() if not k.startswith("stream")}))
                    template["messages"][-1]["content"] = [
                        c for c in template["messages"][-1]["content"] if c["type"] != "image_url"]
                    work = Path(tmp) / "work.json"
                    work.write_text(json.dumps({"jobs": jobs, "template": template, "url": url}))
                    argv = [sys.executable, "-c", BARE_CLIENT, str(work)]
                start = time.perf_counter()
                done = subprocess.run(argv, env=env, capture_output=True, text=True)
                best[name] = min(best[name], time.perf_counter() - start)
                server.shutdown()
                server.server_close()
                if done.returncode:
                    raise SystemExit(f"{name} failed: {done.stderr[-2000:]}")
    plain = sorted(json.dumps({k: v for k, v in b.items() if not k.startswith("stream")}) for b in sova_bodies)
    same = len(sova_bodies) == args.items and sorted(json.dumps(b) for b in bare_bodies) == plain
    print(f"whole process, {args.items} videos decoded from their files, concurrency 8, best of {args.rounds} "
          f"alternating rounds (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores): sova describe "
          f"{best['sova']:.2f} s, bare client {best['bare client']:.2f} s: "
          f"{best['sova'] / best['bare client']:.2f}x (target <= 1.1x); same request bodies: {same}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--items", type=int, default=48)
    parser.add_argument("--latency", type=float, default=0.2, help="server answer time in seconds")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the whole-process comparison")
    parser.add_argument("--quick", action="store_true", help="4 items, 20 ms answers: checks that it runs")
    args = parser.parse_args()
    if args.quick:
        args.items, args.latency, args.rounds = 4, 0.02, 1

    square = next(p for p in example_videos() if "square" in p.name)
    frames = sample_frames(square, rate=1.0)
    loaded = (list(frames.images), tuple(frames.timestamps), True)
    server = start_server(args.latency)
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    rates = {}
    rows = [(1, "decoded once", lambda item, fps: loaded), (16, "decoded once", lambda item, fps: loaded),
            (16, "each item decoded from its file", None)]
    try:
        for concurrency, how, loader in rows:
            describer = OpenAIDescriber(model=MODEL, base_url=url, concurrency=concurrency)
            items = [Item(i, square if loader is None else Path(f"item{i}.mp4")) for i in range(args.items)]
            with tempfile.TemporaryDirectory() as cache:
                start = time.perf_counter()
                summary = describe_items(describer, items, cache, prompt=resolve_prompt("general"),
                                         engine=LocalEngine() if loader is None else LocalEngine(loader),
                                         run=RunOptions(show_progress=False, verbose=False))
                seconds = time.perf_counter() - start
            assert summary.done == args.items, summary
            rates[concurrency, how] = args.items / seconds
            print(f"concurrency {concurrency:2d}, frames {how}: {args.items} items ({len(frames.images)} frames "
                  f"each) in {seconds:.2f} s = {rates[concurrency, how]:.2f} items/s")
    finally:
        server.shutdown()
        server.server_close()
    ratio = rates[16, "decoded once"] / rates[1, "decoded once"]
    print(f"speed-up at concurrency 16: {ratio:.1f}x (target >= 10x; "
          f"ideal {min(16, args.items):d}x at {args.latency * 1000:.0f} ms per answer); with decoding "
          f"{rates[16, 'each item decoded from its file'] / rates[16, 'decoded once']:.2f} of the rate without")
    whole_process(args)


if __name__ == "__main__":
    main()
