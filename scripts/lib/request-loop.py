#!/usr/bin/env python3
"""A client that asks for GET /global/health every EVERY_MS on a new connection, as a user's
page polling a server does, until STOP_FILE exists; for issue 56's planned-reconnect row.

usage: request-loop.py PORT EVERY_MS STOP_FILE
Each request must be answered completely (its Content-Length) within 5 s, else it failed; a failed
request's answer is awaited 25 s more, and its line says whether it came late but whole or never.
Prints "requests N", "failed M" and one "failure ..." line for each (at most 20).
"""
import os
import socket
import sys
import time

LATE_S = 25
REQUEST = b"GET /global/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


def one(port):
    """None when answered completely, else why not. A request not answered within 5 s has failed;
    its answer is still awaited up to LATE_S more, so the failure says whether it came late but
    whole (a stall) or never (a loss)."""
    started = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(REQUEST)
            data = b""
            late = None
            while True:
                head, sep, body = data.partition(b"\r\n\r\n")
                if sep:
                    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")[1:]
                                   if line.lower().startswith(b"content-length:")), None)
                    if length is not None and len(body) >= length:
                        if late:
                            return f"{late}, answered whole after {time.monotonic() - started:.2f} s"
                        return None if head.startswith(b"HTTP/1.1 200") else head.split(b"\r\n")[0].decode(errors="replace")
                try:
                    chunk = sock.recv(65536)
                except TimeoutError as error:
                    if late:
                        return f"{late}, no answer within {LATE_S + 5} s"
                    late = f"{error!r} (5 s, {len(data)} bytes)"
                    sock.settimeout(LATE_S)
                    continue
                if not chunk:
                    return f"{late + ', then ' if late else ''}closed after {len(data)} bytes"
                data += chunk
    except OSError as error:
        return repr(error)


def main():
    port, every, stop = int(sys.argv[1]), float(sys.argv[2]) / 1000, sys.argv[3]
    requests = 0
    failures = []
    next_at = time.monotonic()
    while not os.path.exists(stop):
        why = one(port)
        requests += 1
        if why:
            failures.append(f"{time.strftime('%H:%M:%S')} {why}")
        next_at += every
        time.sleep(max(0.0, next_at - time.monotonic()))  # the request rate is the scenario
    print("requests", requests)
    print("failed", len(failures))
    for failure in failures[:20]:
        print("failure", failure)


if __name__ == "__main__":
    main()
