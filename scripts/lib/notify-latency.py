#!/usr/bin/env python3
"""Times for scripts/lib/notify-latency.sh (bench.sh's notification rows, issue 40).

  post PORT JSON        POSTs JSON to the OpenCode stand-in's /standin/emit on 127.0.0.1:PORT;
                        prints the wall clock (ns) just before the request was sent.
  read PORT PATH        reads the event stream PATH through 127.0.0.1:PORT (a tunnel) and
                        prints "<ns> <sessionID>" for each event naming a session, as it arrives.

Both ends run on one machine (two network namespaces share its clock), so a time printed by
one and a time printed by the other subtract.
"""
import json
import socket
import sys
import time


def post(port, body):
    data = body.encode()
    request = (f"POST /standin/emit HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
               f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n").encode() + data
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        sent = time.time_ns()
        connection.sendall(request)
        while connection.recv(65536):
            pass
    print(sent, flush=True)


def read(port, path):
    with socket.create_connection(("127.0.0.1", port)) as connection:
        connection.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n".encode())
        pending = b""
        while True:
            chunk = connection.recv(65536)
            if not chunk:
                return
            now = time.time_ns()
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                if not line.startswith(b"data:"):
                    continue
                try:
                    event = json.loads(line[5:])
                except ValueError:
                    continue
                payload = event.get("payload", event)
                fields = payload.get("properties") or payload.get("data") or {}
                if isinstance(fields, dict) and fields.get("sessionID"):
                    print(now, fields["sessionID"], flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "post":
        post(int(sys.argv[2]), sys.argv[3])
    elif sys.argv[1] == "read":
        read(int(sys.argv[2]), sys.argv[3])
    else:
        sys.exit("usage: notify-latency.py post PORT JSON | read PORT PATH")
