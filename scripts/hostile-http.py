#!/usr/bin/env python3
"""A hostile HTTP server for octunnel's tests: what answers on the VPS port when it is not
OpenCode but something that wants to crash, exhaust or fool the health test.

One bad answer per --mode (every request gets it, except where a mode says otherwise):

  negative-length   Content-Length: -5
  negative-chunk    chunked, chunk size -1
  overflow-chunk    chunked, chunk size 7fffffffffffffff (size + 2 overflows an Int64)
  endless-chunk     chunked, chunk size 7fffffff, then bytes until the client goes away
  endless-headers   a status line, then unique headers until the client goes away
  sse-no-blank      OpenCode 1's health JSON; its event stream sends `data:` lines forever
                    and never the blank line that ends an event
  echo-version      OpenCode 1 whose version holds escape codes and echoes the password and
                    the Basic token the request carried; a normal event stream
  echo-gateway      `octunnel home up`'s 502 JSON, its error and fix holding escape codes,
                    the password and the token
  not-http          a line of escape codes and the password, not HTTP, then close
  echo-cut          HTTP 200, not OpenCode: 70 bytes of x, then the password and the token,
                    so the password straddles the 80 bytes an error quotes of a body
  not-http-cut      not HTTP: 50 bytes of z, then the password, across the 60 bytes quoted
  lose-first-answer a relay to 127.0.0.1:--target (ntfy): the first POST reaches the target, whose
                    answer is thrown away and the client held without one until it gives up (a
                    publish that reached the server while its answer was lost); every other
                    connection is relayed both ways as is

Prints "LISTENING <port>" on stdout once it accepts connections (port 0 picks a free one).
Listens on 127.0.0.1 only.
"""

import argparse
import base64
import json
import os
import socket
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from byte_pipe import forward as pipe  # noqa: E402

ESC = "\x1b"
NASTY = ESC + "[31m" + ESC + "]0;pwned" + "\x07" + ESC + "[2J"


def read_request(conn):
    data = b""
    while b"\r\n\r\n" not in data and len(data) < 65536:
        piece = conn.recv(4096)
        if not piece:
            return None, {}
        data += piece
    head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1")
    lines = head.split("\r\n")
    parts = lines[0].split(" ")
    path = parts[1] if len(parts) > 1 else "/"
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    return path, headers


def secrets(headers):
    """The password and the Basic token the client sent (empty when none)."""
    auth = headers.get("authorization", "")
    if not auth.startswith("Basic "):
        return "", ""
    token = auth[len("Basic "):]
    try:
        password = base64.b64decode(token).decode("utf-8").split(":", 1)[1]
    except Exception:
        password = ""
    return password, token


def forever(conn, piece):
    try:
        while True:
            conn.sendall(piece)
    except OSError:
        pass


def json_answer(status, reason, obj):
    body = json.dumps(obj).encode()
    return (f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            "Connection: close\r\n\r\n").encode() + body


def handle(conn, mode):
    try:
        path, headers = read_request(conn)
        if path is None:
            return
        password, token = secrets(headers)
        if mode == "negative-length":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: -5\r\n\r\n{\"a\":1}")
        elif mode == "negative-chunk":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\nabc\r\n0\r\n\r\n")
        elif mode == "overflow-chunk":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                         b"7fffffffffffffff\r\n" + b"x" * 1024)
        elif mode == "endless-chunk":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n7fffffff\r\n")
            forever(conn, b"x" * 65536)
        elif mode == "endless-headers":
            conn.sendall(b"HTTP/1.1 200 OK\r\n")
            try:
                n = 0
                while True:
                    conn.sendall(b"".join(b"X-Header-%d: %s\r\n" % (n + i, b"v" * 64) for i in range(1000)))
                    n += 1000
            except OSError:
                pass
        elif mode == "sse-no-blank":
            if path == "/global/health":
                conn.sendall(json_answer(200, "OK", {"healthy": True, "version": "1.0.0"}))
            else:
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
                forever(conn, b"".join(b"data: " + b"y" * 200 + b"\n" for _ in range(300)))
        elif mode == "echo-version":
            if path == "/global/health":
                conn.sendall(json_answer(200, "OK", {"healthy": True, "version": f"1.0.0{NASTY} {password} {token}"}))
            else:
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
                             b"data: {\"payload\":{\"type\":\"server.connected\",\"properties\":{}}}\n\n")
                threading.Event().wait(30)
        elif mode == "echo-gateway":
            conn.sendall(json_answer(502, "Bad Gateway", {
                "octunnel": "home", "home": "127.0.0.1:4096",
                "error": f"nothing listens{NASTY} password={password}",
                "fix": f"start it{NASTY} Authorization: Basic {token}",
            }))
        elif mode == "echo-cut":
            body = ("x" * 70 + f"{password} {token}").encode()
            conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
                         "Connection: close\r\n\r\n".encode() + body)
        elif mode == "not-http-cut":
            conn.sendall(f"{'z' * 50}{password} {token}\r\n".encode())
        elif mode == "not-http":
            conn.sendall(f"{NASTY}this is not HTTP {password} {token}\r\n".encode())
    except OSError:
        pass
    finally:
        try:
            conn.close()
        except OSError:
            pass


def relay(conn, target, lost):
    """lose-first-answer: relays conn to the target, except the first POST's answer (see the top)."""
    upstream = socket.create_connection(("127.0.0.1", target))
    try:
        first = conn.recv(65536)
        if first.startswith(b"POST ") and not lost.is_set():
            lost.set()
            head, _, body = first.partition(b"\r\n\r\n")
            length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), 0)
            while len(body) < length:
                more = conn.recv(65536)
                if not more:
                    break
                first, body = first + more, body + more
            upstream.sendall(first)
            upstream.recv(65536)  # the answer: thrown away
            conn.settimeout(120)
            while conn.recv(65536):
                pass
            return
        upstream.sendall(first)
        back = threading.Thread(target=pipe, args=(upstream, conn), daemon=True)
        back.start()
        pipe(conn, upstream)
        back.join()
    except OSError:
        pass
    finally:
        upstream.close()
        conn.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--mode", required=True, choices=[
        "negative-length", "negative-chunk", "overflow-chunk", "endless-chunk", "endless-headers",
        "sse-no-blank", "echo-version", "echo-gateway", "not-http", "echo-cut", "not-http-cut", "lose-first-answer"])
    parser.add_argument("--target", type=int, help="lose-first-answer: the port relayed to")
    args = parser.parse_args()
    lost = threading.Event()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", args.port))
    listener.listen(64)
    print(f"LISTENING {listener.getsockname()[1]}", flush=True)
    while True:
        conn, _ = listener.accept()
        if args.mode == "lose-first-answer":
            threading.Thread(target=relay, args=(conn, args.target, lost), daemon=True).start()
        else:
            threading.Thread(target=handle, args=(conn, args.mode), daemon=True).start()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
