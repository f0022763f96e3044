"""A DNS server on 127.0.0.1 (UDP) that answers A queries from a table the test changes,
like Docker's embedded DNS answering a service name with its containers' addresses.
Just enough of RFC 1035 for nginx's resolver: one question per query, no compression in
questions, answers with a pointer to the question's name; AAAA and unknown names get an
empty NOERROR answer."""

from __future__ import annotations

import ipaddress
import socket
import struct
import threading
from types import TracebackType

TYPE_A = 1
CLASS_IN = 1
TTL_S = 1


class FakeDns:
    def __init__(self) -> None:
        self.records: dict[str, list[str]] = {}
        self.queries = 0
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.bind(("127.0.0.1", 0))
        self._socket.settimeout(0.2)
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def address(self) -> str:
        host, port = self._socket.getsockname()
        return f"{host}:{port}"

    def answer(self, name: str, addresses: list[str]) -> None:
        self.records[name.lower().rstrip(".")] = list(addresses)

    def __enter__(self) -> FakeDns:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stopped.set()
        self._thread.join(timeout=5)
        self._socket.close()

    def _serve(self) -> None:
        while not self._stopped.is_set():
            try:
                query, client = self._socket.recvfrom(512)
            except TimeoutError:
                continue
            reply = self.reply(query)
            if reply is not None:
                self._socket.sendto(reply, client)

    def reply(self, query: bytes) -> bytes | None:
        if len(query) < 12:
            return None
        self.queries += 1
        query_id, _flags, questions = struct.unpack("!HHH", query[:6])
        if questions != 1:
            return None
        labels, offset = [], 12
        while offset < len(query) and query[offset]:
            length = query[offset]
            labels.append(query[offset + 1 : offset + 1 + length].decode("ascii", "replace"))
            offset += 1 + length
        question_end = offset + 5  # the zero label, QTYPE, QCLASS
        if question_end > len(query):
            return None
        qtype, qclass = struct.unpack("!HH", query[offset + 1 : question_end])
        name = ".".join(labels).lower()
        known = name in self.records
        addresses = self.records.get(name, []) if (qtype, qclass) == (TYPE_A, CLASS_IN) else []
        # QR, opcode 0, AA, RD copied, RA; rcode 0 or 3 (NXDOMAIN: no such name)
        flags = 0x8400 | 0x0100 | 0x0080 | (0 if known else 3)
        header = struct.pack("!HHHHHH", query_id, flags, 1, len(addresses), 0, 0)
        answers = b"".join(
            struct.pack("!HHHIH", 0xC00C, TYPE_A, CLASS_IN, TTL_S, 4)
            + ipaddress.IPv4Address(address).packed
            for address in addresses
        )
        return header + query[12:question_end] + answers
