#!/usr/bin/env python3
"""A minimal HTTP CONNECT proxy for the push tests: logs each request line to the file given,
tunnels CONNECT to its target on 127.0.0.1 only. Prints "LISTENING <port>" once it accepts."""
import os, socket, sys, threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from byte_pipe import forward  # noqa: E402

log_path = sys.argv[1]
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(16)
print("LISTENING", listener.getsockname()[1], flush=True)

def pump(a, b):
    try:
        forward(a, b)
    finally:
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

def serve(conn):
    head = b""
    while b"\r\n\r\n" not in head and len(head) < 65536:
        chunk = conn.recv(4096)
        if not chunk:
            return conn.close()
        head += chunk
    line = head.split(b"\r\n", 1)[0].decode("latin-1")
    with open(log_path, "a") as log:
        log.write(line + "\n")
    parts = line.split()
    if len(parts) < 2 or parts[0] != "CONNECT" or not parts[1].startswith("127.0.0.1:"):
        conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
        return conn.close()
    upstream = socket.create_connection(("127.0.0.1", int(parts[1].split(":")[1])))
    conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
    threading.Thread(target=pump, args=(conn, upstream), daemon=True).start()
    pump(upstream, conn)

while True:
    c, _ = listener.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
