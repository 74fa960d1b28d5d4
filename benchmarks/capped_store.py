#!/usr/bin/env python3
"""An EMULATED shared store for benchmarks: files under ROOT served over HTTP on 127.0.0.1 with one
aggregate byte-rate cap for all clients together, as a saturated shared file system would give them
(a real GPFS cannot be had on this machine). GET /__stats answers {"bytes": N, "requests": N}.

    capped_store.py ROOT PORT BYTES_PER_SECOND      (0: no cap, only the counts)
"""
import http.server
import json
import os
import sys
import threading
import time

CHUNK = 16384


class Bucket:
    """Tokens refill at rate bytes/s up to a tenth of a second's worth; every sender takes from it."""

    def __init__(self, rate):
        self.rate = float(rate)
        self.burst = max(CHUNK, self.rate / 10)
        self.tokens = self.burst
        self.last = time.monotonic()
        self.lock = threading.Lock()

    def take(self, n):
        while True:
            with self.lock:
                now = time.monotonic()
                self.tokens = min(self.burst, self.tokens + (now - self.last) * self.rate)
                self.last = now
                if self.tokens >= n:
                    self.tokens -= n
                    return
                wait = (n - self.tokens) / self.rate
            time.sleep(wait)


def main():
    root, port, rate = os.path.realpath(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    bucket = Bucket(rate) if rate > 0 else None
    stats = {"bytes": 0, "requests": 0}
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            if self.path == "/__stats":
                body = json.dumps(stats).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            path = os.path.realpath(os.path.join(root, self.path.split("?")[0].lstrip("/")))
            if not path.startswith(root + os.sep) or not os.path.isfile(path):
                self.send_error(404)
                return
            size = os.path.getsize(path)
            self.send_response(200)
            self.send_header("Content-Length", str(size))
            self.end_headers()
            with open(path, "rb") as f:
                while True:
                    chunk = f.read(CHUNK)
                    if not chunk:
                        break
                    if bucket:
                        bucket.take(len(chunk))
                    self.wfile.write(chunk)
            with lock:
                stats["bytes"] += size
                stats["requests"] += 1

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    print(f"serving {root} on 127.0.0.1:{port} at {rate or 'any'} B/s", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
