"""The one byte copy the test helpers share: scripts/hostile-http.py, scripts/connect-proxy.py and
scripts/lib/echo_server.py (a script in scripts/ adds scripts/lib to sys.path to import it)."""
import socket


def forward(source, sink, size=65536):
    """Copies source to sink until source ends, then shuts sink's write side. A socket error
    (the peer reset or closed) just ends the copy."""
    try:
        while True:
            data = source.recv(size)
            if not data:
                break
            sink.sendall(data)
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        pass
