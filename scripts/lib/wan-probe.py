#!/usr/bin/env python3
"""Times new connections through a tunnel, as a user feels them: connect, send
GET /global/health, stop at the last byte of the answer (its Content-Length; not at the close).

usage: wan-probe.py [HOST:]PORT CONNECTIONS SAMPLES [PAUSE_S]
Each sample opens CONNECTIONS connections at once, sends the request on each as soon as it
is connected, and ends when every answer is complete; it prints the sample's time in ms,
one line per sample. PAUSE_S (default 0.5) separates samples, so a tunnel that opens
channels ahead of need has refilled (as between a user's clicks).
"""
import selectors
import socket
import sys
import time

REQUEST = b"GET /global/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


def complete(data):
    head, sep, body = data.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value)
    return False


def sample(host, port, count):
    selector = selectors.DefaultSelector()
    started = time.monotonic()
    pending = {}
    for _ in range(count):
        sock = socket.socket()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setblocking(False)
        try:
            sock.connect((host, port))
        except BlockingIOError:
            pass
        pending[sock] = b""
        selector.register(sock, selectors.EVENT_WRITE)
    while pending:
        events = selector.select(timeout=30)
        if not events:
            raise SystemExit("no answer within 30 s")
        for key, mask in events:
            sock = key.fileobj
            if mask & selectors.EVENT_WRITE:
                sock.sendall(REQUEST)
                selector.modify(sock, selectors.EVENT_READ)
                continue
            chunk = sock.recv(65536)
            if not chunk:
                raise SystemExit("a connection closed before its answer")
            pending[sock] += chunk
            if complete(pending[sock]):
                del pending[sock]
                selector.unregister(sock)
                sock.close()
    return (time.monotonic() - started) * 1000


def main():
    host, _, port = sys.argv[1].rpartition(":")
    host, port = host or "127.0.0.1", int(port)
    count, samples = int(sys.argv[2]), int(sys.argv[3])
    pause = float(sys.argv[4]) if len(sys.argv) > 4 else 0.5
    for _ in range(samples):
        print(f"{sample(host, port, count):.1f}", flush=True)
        time.sleep(pause)


if __name__ == "__main__":
    main()
