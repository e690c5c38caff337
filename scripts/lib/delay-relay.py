#!/usr/bin/env python3
"""A TCP relay that holds every chunk DELAY_MS before passing it on, in order, both ways.

bench.sh's stand-in for `tc netem delay` on kernels built without netem: run inside the VPS's
network namespace in front of sshd, it adds 2 × DELAY_MS to every SSH round trip while
leaving throughput to the relay's own speed.

usage: delay-relay.py LISTEN_HOST LISTEN_PORT TARGET_HOST TARGET_PORT DELAY_MS
Prints "LISTENING" once it accepts connections.
"""
import asyncio
import sys
import time


async def pipe(reader, writer, delay):
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
        await asyncio.gather(pipe(client_reader, server_writer, delay), pipe(server_reader, client_writer, delay),
                             return_exceptions=True)
        for writer in (client_writer, server_writer):
            writer.close()

    server = await asyncio.start_server(handle, listen_host, int(listen_port))
    print("LISTENING", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
