#!/usr/bin/env python3
"""A TCP relay that holds every chunk DELAY_MS before passing it on, in order, both ways.

bench.sh's stand-in for `tc netem delay` on kernels built without netem: run inside the VPS's
network namespace in front of sshd, it adds 2 × DELAY_MS to every SSH round trip while
leaving throughput to the relay's own speed.

usage: delay-relay.py LISTEN_HOST LISTEN_PORT TARGET_HOST TARGET_PORT DELAY_MS
Prints "LISTENING" once it accepts connections.
"""
import asyncio
import socket
import sys
import time


def quick_ack(sock):
    """ACKs what was read now: a router does not hold ACKs back, so neither may the relay
    (Linux delays them up to 40 ms, which would stall a Nagle-ing sender by a round trip)."""
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
    except OSError:
        pass


async def pipe(reader, writer, delay, source):
    queue = asyncio.Queue()

    async def sender():
        while True:
            due, data = await queue.get()
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            if data is None:
                if writer.can_write_eof():
                    writer.write_eof()
                return
            writer.write(data)
            await writer.drain()

    task = asyncio.create_task(sender())
    try:
        while True:
            data = await reader.read(65536)
            quick_ack(source)
            await queue.put((time.monotonic() + delay, data or None))
            if not data:
                break
        await task
    except (ConnectionError, asyncio.CancelledError):
        task.cancel()


async def main():
    listen_host, listen_port, target_host, target_port, delay_ms = sys.argv[1:6]
    delay = float(delay_ms) / 1000

    async def handle(client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection(target_host, int(target_port))
        except OSError:
            client_writer.close()
            return
        client_socket = client_writer.get_extra_info("socket")
        server_socket = server_writer.get_extra_info("socket")
        await asyncio.gather(pipe(client_reader, server_writer, delay, client_socket),
                             pipe(server_reader, client_writer, delay, server_socket),
                             return_exceptions=True)
        for writer in (client_writer, server_writer):
            writer.close()

    server = await asyncio.start_server(handle, listen_host, int(listen_port))
    print("LISTENING", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
