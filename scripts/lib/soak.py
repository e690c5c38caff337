#!/usr/bin/env python3
"""The data-path soak's two ends, for scripts/soak.sh.

  soak.py server                      an echo server on 127.0.0.1 (free port), one accepting
                                      process per core: prints "PORT n".
  soak.py client PORT SECONDS WORKERS [PID...]
                                      WORKERS threads open connections to PORT until SECONDS
                                      have passed, spread over SOAK_PROCESSES processes (default:
                                      one per core; one Python process is held to one core by
                                      its lock, and was the soak's limit); PIDs (the octunnel
                                      processes) are sampled for memory and descriptors. Prints
                                      one summary line per measure ("key value") and, for each
                                      connection that went wrong, a line saying where its bytes
                                      came from. Beside them, every SOAK_BURST_EVERY seconds
                                      (default 15; 0: never) SOAK_BURST_SIZE (default 20)
                                      connections open at once (issue 56: more than the pool
                                      holds), each echoed and checked like the others.

Every payload is made of 4 KiB records, each starting with a 16-byte header that names its
connection and its offset ("OCT" + kind, connection number, offset), so a byte out of place is
traced to the connection and offset it belongs to. Each connection has a random size (1 B to
1 MiB, most of them small) and a random kind:
  echo     writes and reads at once; the answer must be the payload, byte for byte
  slow     the same, reading 1 KiB at a time with pauses (a slow client)
  abandon  writes half, reads what came, closes normally without reading the rest
  reset    writes some, then closes with SO_LINGER 0 (an RST)
A connection that ends early (EOF or a reset from the tunnel, e.g. during a reconnect) with
every byte it got in place is "cut", not wrong; one that moves nothing for 30 s is "hung".
"""
import multiprocessing
import os
import random
import select
import socket
import struct
import sys
import threading
import time

import echo_server

RECORD = 4096
HEADER = struct.Struct(">4sIQ")
KINDS = ["echo"] * 6 + ["slow", "abandon", "reset"]
HUNG_AFTER = 30.0


# randbytes, not a byte at a time: 1.3 s of CPU at each start (9 s at a load of 16) for the same kind of filler.
FILLERS = [random.Random(n).randbytes(RECORD - HEADER.size) for n in range(64)]


def payload(connection, kind, size):
    body = FILLERS[connection % 64]
    tag = b"OC" + kind[:2].encode()
    parts = []
    for offset in range(0, size, RECORD):
        parts.append(HEADER.pack(tag, connection, offset) + body)
    return b"".join(parts)[:size]


def describe(data, expected, at):
    """Where the bytes at `at` came from: the nearest record header at or before it."""
    start = max(0, at - RECORD)
    found = data.rfind(b"OC", start, at + 1)
    origin = "no record header near it"
    if found >= 0 and found + HEADER.size <= len(data):
        tag, connection, offset = HEADER.unpack_from(data, found)
        origin = f"record of connection {connection} ({tag[2:].decode(errors='replace')}) at offset {offset}, seen at {found}"
    return f"first difference at byte {at} (0x{data[at]:02x}, expected 0x{expected[at]:02x} )" if at < len(data) and at < len(expected) \
        else f"{len(data)} bytes for {len(expected)}", origin


class Totals:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {"connections": 0, "checked": 0, "cut": 0, "refused": 0, "out_of_place": 0, "hung": 0, "client_errors": 0}
        self.sent = 0
        self.received = 0
        self.problems = []

    def add(self, key, sent=0, received=0, problem=None):
        with self.lock:
            self.counts[key] += 1
            self.counts["connections"] += 1
            self.sent += sent
            self.received += received
            if problem and len(self.problems) < 50:
                self.problems.append(problem)


def one_connection(port, connection, kind, size, totals):
    data = payload(connection, kind, size)
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    except OSError as error:
        totals.add("refused", problem=None if error.errno in (111, 104) else f"connection {connection}: connect: {error}")
        return
    sock.setblocking(False)
    sent = 0
    got = bytearray()
    write_until = size if kind in ("echo", "slow") else max(1, size // 2)
    last_move = time.monotonic()
    done_writing = False
    state = "checked"
    try:
        while True:
            if kind == "reset" and sent >= write_until:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                state = "cut"
                break
            if kind == "abandon" and sent >= write_until and len(got) >= min(sent, write_until) // 2:
                state = "cut"
                break
            wants_write = not done_writing and sent < write_until
            readable, writable, _ = select.select([sock], [sock] if wants_write else [], [], 1.0)
            now = time.monotonic()
            if writable:
                try:
                    n = sock.send(data[sent:sent + 65536])
                    sent += n
                    last_move = now
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError:
                    state = "cut"
                    break
                if sent >= size and kind in ("echo", "slow") and not done_writing:
                    done_writing = True
                    try:
                        sock.shutdown(socket.SHUT_WR)
                    except OSError:
                        state = "cut"
                        break
            if readable:
                try:
                    chunk = sock.recv(1024 if kind == "slow" else 262144)
                except (BlockingIOError, InterruptedError):
                    chunk = None
                except OSError:
                    state = "cut"
                    break
                if chunk == b"":
                    break
                if chunk:
                    got += chunk
                    last_move = now
                    if kind == "slow":
                        time.sleep(0.001)  # a slow reader is the scenario, not synchronisation
            if now - last_move > HUNG_AFTER:
                state = "hung"
                break
    finally:
        sock.close()
    prefix = data[:len(got)]
    if bytes(got) != prefix or len(got) > size:
        at = next((i for i in range(min(len(got), size)) if got[i] != data[i]), min(len(got), size))
        where, origin = describe(bytes(got), data, at)
        totals.add("out_of_place", sent, len(got), f"connection {connection} ({kind}, {size} B): {where}; {origin}")
    elif state == "hung":
        totals.add("hung", sent, len(got), f"connection {connection} ({kind}, {size} B): nothing moved for {HUNG_AFTER:.0f} s "
                                           f"after {sent} sent, {len(got)} back")
    elif state == "checked" and kind in ("echo", "slow") and len(got) == size:
        totals.add("checked", sent, len(got))
    else:
        totals.add("cut", sent, len(got))


def sample(pids):
    out = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as status:
                fields = dict(line.split(":", 1) for line in status if ":" in line)
            out[pid] = (int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0]), len(os.listdir(f"/proc/{pid}/fd")))
        except (OSError, KeyError, ValueError):
            pass
    return out


def run_workers(port, deadline, workers, first_connection, results):
    """One client process: WORKERS threads until DEADLINE; its totals go to RESULTS."""
    totals = Totals()
    counter = iter(range(first_connection, 1 << 62))
    counter_lock = threading.Lock()

    def worker(seed):
        rng = random.Random(seed)
        while time.monotonic() < deadline:
            with counter_lock:
                connection = next(counter)
            # Half of them small (log-uniform: most requests are), half bulk (uniform to 1 MiB).
            size = int(2 ** rng.uniform(0, 20.0)) if rng.random() < 0.5 else rng.randint(1, 1 << 20)
            size = min(1 << 20, max(1, size))
            try:
                one_connection(port, connection, rng.choice(KINDS), size, totals)
            except Exception as error:  # the soak's own bug: counted, so the run fails
                totals.add("client_errors", problem=f"connection {connection}: the client failed: {error!r}")

    threads = [threading.Thread(target=worker, args=(first_connection + n,)) for n in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    results.put((totals.counts, totals.sent, totals.received, totals.problems))


def checked_connection(port, connection, kind, size, totals):
    """one_connection, where the client's own failure is counted (the run then fails)."""
    try:
        one_connection(port, connection, kind, size, totals)
    except Exception as error:  # the soak's own bug
        totals.add("client_errors", problem=f"connection {connection}: the client failed: {error!r}")


def bursts(port, deadline, first_connection, totals, counter):
    """Every SOAK_BURST_EVERY s until DEADLINE, SOAK_BURST_SIZE echoed connections at once (a page
    with many assets, an agent fetching in parallel), small to medium, checked byte for byte."""
    every = float(os.environ.get("SOAK_BURST_EVERY", "15"))
    size = int(os.environ.get("SOAK_BURST_SIZE", "20"))
    if every <= 0 or size <= 0:
        return
    rng = random.Random(first_connection)
    connection = first_connection
    while time.monotonic() + every < deadline:
        time.sleep(every)  # the bursts' rhythm is the scenario, not synchronisation
        threads = []
        for _ in range(size):
            nbytes = int(2 ** rng.uniform(0, 17.0))
            threads.append(threading.Thread(target=checked_connection, args=(port, connection, "echo", nbytes, totals)))
            connection += 1
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        counter.append(size)


def client(port, seconds, workers, pids):
    processes = max(1, min(workers, int(os.environ.get("SOAK_PROCESSES", "0")) or os.cpu_count() or 1))
    deadline = time.monotonic() + seconds
    results = multiprocessing.Queue()
    children = []
    for index in range(processes):
        share = workers // processes + (1 if index < workers % processes else 0)
        # Connection numbers of each process start 2^26 apart (a record names one connection in
        # 32 bits; a 10-minute run opens about 2^15).
        child = multiprocessing.Process(target=run_workers, args=(port, deadline, share, 1 + (index << 26), results))
        child.start()
        children.append(child)
    burst_totals = Totals()
    burst_sizes = []
    # Burst connections are numbered after every worker process's (2^26 apart each).
    burster = threading.Thread(target=bursts, args=(port, deadline, (processes + 1) << 26, burst_totals, burst_sizes))
    burster.start()
    samples = []
    start = time.monotonic()
    gathered = []
    while len(gathered) < len(children):
        samples.append((time.monotonic() - start, sample(pids)))
        try:
            gathered.append(results.get(timeout=5.0))
        except Exception:  # queue.Empty: sample again
            if not any(child.is_alive() for child in children) and results.empty():
                break
    for child in children:
        child.join()
    burster.join()
    elapsed = time.monotonic() - start
    counts = {}
    sent = received = 0
    problems = []
    burst_part = (burst_totals.counts, burst_totals.sent, burst_totals.received, burst_totals.problems)
    for part_counts, part_sent, part_received, part_problems in gathered + [burst_part]:
        for key, value in part_counts.items():
            counts[key] = counts.get(key, 0) + value
        sent += part_sent
        received += part_received
        problems += part_problems
    if len(gathered) < len(children):
        problems.append(f"{len(children) - len(gathered)} of {len(children)} client processes died without a summary")
        counts["hung"] = counts.get("hung", 0) + len(children) - len(gathered)
    for key, value in counts.items():
        print(key, value)
    print("client_processes", len(children))
    print("bursts", len(burst_sizes))
    print("burst_connections", burst_totals.counts["connections"])
    print("burst_checked", burst_totals.counts["checked"])
    print("bytes_sent", sent)
    print("bytes_received", received)
    print("seconds", f"{elapsed:.1f}")
    for pid in pids:
        series = [(at, s[pid]) for at, s in samples if pid in s]
        if not series:
            continue
        peak_rss = max(v[1] for _, v in series)
        peak_fds = max(v[2] for _, v in series)
        # Growth between the end of the second fifth of the run and its end (minute 2 and 10 of 10).
        early = [v for at, v in series if at >= elapsed * 0.2] or [series[0][1]]
        middle = [v for at, v in series if at >= elapsed * 0.6] or [series[-1][1]]
        print(f"pid_{pid} peak_rss_kib {peak_rss} peak_fds {peak_fds} rss_kib_at_20pct {early[0][0]} rss_kib_at_end {series[-1][1][0]} "
              f"fds_at_20pct {early[0][2]} fds_at_end {series[-1][1][2]} rss_kib_at_60pct {middle[0][0]}")
        # RSS and descriptors at each tenth of the run: growth that goes on is a leak, a rise
        # that levels off is the allocator settling.
        tenths = [next((v for at, v in series if at >= elapsed * k / 10), series[-1][1]) for k in range(1, 11)]
        print(f"pid_{pid} rss_kib_by_tenth {' '.join(str(v[0]) for v in tenths)} fds_by_tenth {' '.join(str(v[2]) for v in tenths)}")
    for problem in problems[:50]:
        print("problem", problem)


def server():
    # One accepting process per core, for the client's reason (scripts/soak.sh stops them all).
    echo_server.serve(int(os.environ.get("SOAK_PROCESSES", "0")) or os.cpu_count() or 1)


if __name__ == "__main__":
    if sys.argv[1] == "server":
        server()
    else:
        client(int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), [int(p) for p in sys.argv[5:]])
