#!/usr/bin/env python3
"""A stand-in for the OpenCode server on the home machine, for the demo and the tests.

It answers like OpenCode: GET /global/health -> {"healthy": true, "version": ...} and
GET /global/event -> a server-sent event stream that opens with server.connected and then
sends heartbeats. Flavours reproduce what the diagnosis must recognise:
  opencode1  OpenCode 1.x (default)
  opencode2  OpenCode 2.x: /global/health is 404, /api/health and /event answer instead
  other      some other web server (HTML on every path)
  nosse      health is fine but the event stream never says server.connected
--password enables HTTP Basic auth (user --username, default "opencode").
--port 0 picks a free port; the first line on stdout is "LISTENING <port>".
"""
import argparse
import base64
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=4096)
    parser.add_argument("--flavor", choices=["opencode1", "opencode2", "other", "nosse"], default="opencode1")
    parser.add_argument("--version", dest="server_version", default=None)
    parser.add_argument("--password", default=None)
    parser.add_argument("--username", default="opencode")
    parser.add_argument("--heartbeat", type=float, default=10.0, help="seconds between SSE heartbeats")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args()
    version = args.server_version or ("2.0.0" if args.flavor == "opencode2" else "1.0.0")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "opencode-standin"

        def log_message(self, fmt, *a):
            if not args.quiet:
                sys.stderr.write("standin: " + (fmt % a) + "\n")

        def send_body(self, status, body, content_type="application/json", extra=None):
            data = body.encode() if isinstance(body, str) else body
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for key, value in (extra or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def authorized(self):
            if args.password is None:
                return True
            expected = "Basic " + base64.b64encode(f"{args.username}:{args.password}".encode()).decode()
            if self.headers.get("Authorization") == expected:
                return True
            self.send_body(401, '{"error":"unauthorized"}', extra={"WWW-Authenticate": 'Basic realm="opencode"'})
            return False

        def do_GET(self):
            path = self.path.split("?")[0]
            if args.flavor == "other":
                return self.send_body(200, "<html><body>Welcome to nginx!</body></html>", "text/html")
            if not self.authorized():
                return
            health = {"opencode1": "/global/health", "nosse": "/global/health", "opencode2": "/api/health"}[args.flavor]
            events = "/event" if args.flavor == "opencode2" else "/global/event"
            if path == health:
                return self.send_body(200, json.dumps({"healthy": True, "version": version}))
            if path == events:
                return self.stream_events()
            if path.startswith("/bytes/"):
                count = int(path.split("/")[2])
                chunk = bytes(range(256)) * 256
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(count))
                self.end_headers()
                left = count
                while left > 0:
                    piece = chunk[: min(left, len(chunk))]
                    self.wfile.write(piece)
                    left -= len(piece)
                return
            return self.send_body(404, '{"error":"not found"}')

        def stream_events(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            try:
                if args.flavor == "opencode1":
                    self.event({"directory": "global", "payload": {"type": "server.connected", "properties": {}}})
                elif args.flavor == "opencode2":
                    self.event({"type": "server.connected", "properties": {}})
                while True:
                    if args.flavor == "opencode2":
                        self.event({"type": "server.heartbeat", "properties": {}})
                    else:
                        self.event({"directory": "global", "payload": {"type": "server.heartbeat", "properties": {}}})
                    time.sleep(args.heartbeat)
            except (BrokenPipeError, ConnectionResetError):
                return

        def event(self, obj):
            self.wfile.write(("data: " + json.dumps(obj) + "\n\n").encode())
            self.wfile.flush()

    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    print(f"LISTENING {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
