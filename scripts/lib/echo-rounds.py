#!/usr/bin/env python3
"""Echo rounds through a tunnel, for scripts/bench-rekey.sh.

  echo-rounds.py server                 an echo server on 127.0.0.1 (free port): prints "PORT n"
  echo-rounds.py client PORT N MIB T    N concurrent connections each echo MIB MiB both ways
                                        (writing and reading at once), bytes checked; a stream
                                        that moves nothing for T s is stalled. Prints
                                        "<seconds> <intact> <N>" (seconds of the whole round).
"""
import os
import socket
import sys
import threading
import time

import echo_server


def client(port, streams, mib, stall):
    size = mib << 20
    block = os.urandom((1 << 20) + 7)
    payload = (block * (size // len(block) + 1))[:size]
    results = []

    def one():
        try:
            s = socket.create_connection(("127.0.0.1", port))
            s.settimeout(stall)

            def write():
                try:
                    s.sendall(payload)
                    s.shutdown(socket.SHUT_WR)
                except OSError:
                    pass

            writer = threading.Thread(target=write, daemon=True)
            writer.start()
            got = bytearray()
            while True:
                chunk = s.recv(262144)
                if not chunk:
                    break
                got += chunk
            s.close()
            results.append(bytes(got) == payload)
        except OSError:
            results.append(False)

    start = time.monotonic()
    threads = [threading.Thread(target=one) for _ in range(streams)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(f"{time.monotonic() - start:.2f} {sum(results)} {streams}", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "server":
        echo_server.serve()
    else:
        client(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]))
