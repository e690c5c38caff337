"""The echo server scripts/lib/echo-rounds.py and scripts/lib/soak.py share."""
import os
import socket
import threading

from byte_pipe import forward


def serve(processes=1):
    """Echoes every connection on 127.0.0.1 (a free port, printed as "PORT n") until killed:
    each byte back as it comes, then the write side shut at the client's end. With
    `processes` > 1, that many processes accept on the one listener (the caller stops them all).
    A connection the client resets just ends."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1024)
    print("PORT", listener.getsockname()[1], flush=True)
    for _ in range(max(1, processes) - 1):
        if os.fork() == 0:
            break

    def echo(conn):
        with conn:
            forward(conn, conn, 262144)

    while True:
        conn, _ = listener.accept()
        threading.Thread(target=echo, args=(conn,), daemon=True).start()
