"""Web servers on loopback addresses that misbehave the way an attacker's would: one that
answers a metadata document a byte at a time, forever (`DribblingServer`), and one that
resets every connection it accepts (`ResettingServer`). The dribbler is asyncio in a
thread of its own, so hundreds of connections cost it nothing."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import threading
from collections import Counter

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n"


def shared_free_port(hosts: list[str]) -> int:
    """A port free on every one of `hosts` (loopback addresses)."""
    while True:
        with socket.socket() as probe:
            probe.bind((hosts[0], 0))
            port = int(probe.getsockname()[1])
        try:
            for host in hosts[1:]:
                with socket.socket() as other:
                    other.bind((host, port))
        except OSError:
            continue
        return port


class DribblingServer:
    """Answers every request with headers, then one byte of body every `interval_s`
    (never all 4096): a document that never ends. Listens on `hosts`, one port."""

    def __init__(self, hosts: list[str] | None = None, interval_s: float = 0.5) -> None:
        self.hosts = hosts or ["127.0.0.1"]
        self.interval_s = interval_s
        self.port = shared_free_port(self.hosts)
        self.connections: Counter[str] = Counter()  # accepted, by local address
        self.open_now = 0
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.servers: list[asyncio.base_events.Server] = []

    def url(self, path: str, host: str | None = None) -> str:
        return f"http://{host or self.hosts[0]}:{self.port}{path}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections[writer.get_extra_info("sockname")[0]] += 1
        self.open_now += 1
        try:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(HEAD)
            while True:
                await writer.drain()
                await asyncio.sleep(self.interval_s)
                writer.write(b" ")
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:  # stopped: end quietly
            pass
        finally:
            self.open_now -= 1
            writer.close()

    def start(self) -> DribblingServer:
        self.thread.start()
        for host in self.hosts:
            start = asyncio.start_server(self._serve, host, self.port, backlog=1024)
            self.servers.append(asyncio.run_coroutine_threadsafe(start, self.loop).result(10))
        return self

    def stop(self) -> None:
        async def close() -> None:
            for server in self.servers:
                server.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


class ResettingServer:
    """Accepts connections and closes each at once with a TCP reset (SO_LINGER 0)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.listener = socket.create_server((host, port))
        self.port = int(self.listener.getsockname()[1])
        self.accepted = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.accepted += 1
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()

    def start(self) -> ResettingServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept
        self.listener.close()
