#!/usr/bin/env python3
"""A stand-in for the OpenCode server on the home machine, for the demo and the tests.

Each flavour answers as that OpenCode version's source defines it (anomalyco/opencode; what was
read, and where, is in docs/troubleshooting.md "Which OpenCode answers"):

  opencode1      OpenCode 1.x (default): GET /global/health -> {"healthy":true,"version"};
                 GET /global/event -> SSE, first data {"payload":{"type":"server.connected",
                 "properties":{}}}, then server.heartbeat the same way; GET /event -> the same
                 events unwrapped ({"type":...,"properties":{}}). Other paths: the web app (HTML),
                 as 1.x's catch-all proxies it. Basic auth on every path only with --password.
  opencode2.0.3  OpenCode 2.0.3: GET /api/health -> {"healthy":true,"version","pid"};
                 GET /api/event -> SSE "data: {"id":...,"type":"server.connected","data":{}}",
                 heartbeats as SSE comments (": heartbeat"). No /api/info, no /api/status
                 (upstream #49210). Unknown paths: an empty 404 (Effect's RouteNotFound).
  opencode2      OpenCode 2 as it ships now (2.0.x): GET /api/info -> {"version","pid","urls",
                 "paths":{"tmp","home"}}; /api/health is gone (404); /api/event as above.
                 Paths outside /api: the web app (HTML), as 2.0.12 serves it.
  other          some other web server (HTML on every path)
  nosse          OpenCode 1.x whose event stream never says server.connected

In the 2.x flavours the password is mandatory, as `opencode serve` 2.x always asks for one:
without --password a random one is made, printed as "PASSWORD <it>" on stdout (as opencode
prints its generated password at start). Their API routes answer 401
{"_tag":"UnauthorizedError","message":"Authentication required"} without it; paths the API does
not know answer without a password. User: --username (default "opencode").
--port 0 picks a free port; the last line on stdout at start is "LISTENING <port>".
/bytes/N (every flavour, behind the password) answers N bytes, for the tunnel's own tests.
"""
import argparse
import base64
import json
import os
import secrets
import sys
import tempfile
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FLAVOURS = ["opencode1", "opencode2.0.3", "opencode2", "other", "nosse"]
WEB_APP = "<!doctype html><html><head><title>OpenCode</title></head><body><div id=\"root\"></div></body></html>"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=4096)
    parser.add_argument("--flavor", "--flavour", dest="flavor", choices=FLAVOURS,
                        default=os.environ.get("OPENCODE_FLAVOUR", "opencode1"))
    parser.add_argument("--version", dest="server_version", default=None)
    parser.add_argument("--password", default=None)
    parser.add_argument("--username", default="opencode")
    parser.add_argument("--heartbeat", type=float, default=None,
                        help="seconds between SSE heartbeats (default: 10 for 1.x, 15 for 2.x, as the source)")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args()
    two = args.flavor.startswith("opencode2")
    version = args.server_version or {"opencode2.0.3": "2.0.3", "opencode2": "2.0.12"}.get(args.flavor, "1.0.0")
    heartbeat = args.heartbeat if args.heartbeat is not None else (15.0 if two else 10.0)
    if two and not args.password:
        args.password = secrets.token_urlsafe(18)
        print(f"PASSWORD {args.password}", flush=True)
    state = {"port": args.port}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "opencode-standin"

        def log_message(self, fmt, *a):
            if not args.quiet:
                sys.stderr.write("standin: " + (fmt % a) + "\n")

        def send_body(self, status, body, content_type="application/json", extra=None):
            data = body.encode() if isinstance(body, str) else body
            self.send_response(status)
            if data or content_type != "application/json":
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
            challenge = {"WWW-Authenticate": 'Basic realm="Secure Area"'}
            if two:
                self.send_body(401, json.dumps({"_tag": "UnauthorizedError", "message": "Authentication required"}), extra=challenge)
            else:
                self.send_body(401, "Unauthorized", "text/plain; charset=UTF-8", extra=challenge)
            return False

        def do_GET(self):
            path = self.path.split("?")[0]
            if args.flavor == "other":
                return self.send_body(200, "<html><body>Welcome to nginx!</body></html>", "text/html")
            if two:
                return self.opencode2(path)
            if not self.authorized():
                return
            if path == "/global/health":
                return self.send_body(200, json.dumps({"healthy": True, "version": version}))
            if path == "/global/event":
                return self.stream_events(global_shape=True)
            if path == "/event":
                return self.stream_events(global_shape=False)
            if path.startswith("/bytes/"):
                return self.send_bytes(int(path.split("/")[2]))
            return self.send_body(200, WEB_APP, "text/html")

        def opencode2(self, path):
            routes = {"/api/event", "/bytes"}
            routes.add("/api/health" if args.flavor == "opencode2.0.3" else "/api/info")
            route = "/bytes" if path.startswith("/bytes/") else path
            if route not in routes:
                if args.flavor == "opencode2" and not path.startswith("/api/"):
                    return self.send_body(200, WEB_APP, "text/html")
                return self.send_body(404, b"")
            if not self.authorized():
                return
            if route == "/api/health":
                return self.send_body(200, json.dumps({"healthy": True, "version": version, "pid": os.getpid()}))
            if route == "/api/info":
                return self.send_body(200, json.dumps({
                    "version": version, "pid": os.getpid(), "urls": [f"http://{args.host}:{state['port']}"],
                    "paths": {"tmp": tempfile.gettempdir(), "home": os.path.expanduser("~")}}))
            if route == "/api/event":
                return self.stream_events(global_shape=False)
            return self.send_bytes(int(path.split("/")[2]))

        def send_bytes(self, count):
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

        def stream_events(self, global_shape):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache, no-transform" if two else "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            try:
                if two:
                    self.event({"id": "evt_" + secrets.token_hex(12), "type": "server.connected", "data": {}})
                    while True:
                        time.sleep(heartbeat)
                        self.write(": heartbeat\n\n")
                if args.flavor != "nosse":
                    self.event(self.shape("server.connected", global_shape))
                while True:
                    self.event(self.shape("server.heartbeat", global_shape))
                    time.sleep(heartbeat)
            except (BrokenPipeError, ConnectionResetError):
                return

        @staticmethod
        def shape(kind, global_shape):
            return {"payload": {"type": kind, "properties": {}}} if global_shape else {"type": kind, "properties": {}}

        def event(self, obj):
            self.write("data: " + json.dumps(obj) + "\n\n")

        def write(self, text):
            self.wfile.write(text.encode())
            self.wfile.flush()

    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    state["port"] = server.server_address[1]
    print(f"LISTENING {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
