"""The server's record of what arrived: per unit its sequence number,
generation time and receive time, in arrival order.

Receive time is CLOCK_REALTIME read when the server's read returns (the
study's definition: when the application gets the data), so units that one
read returns share one receive time: they arrived together.

Kernel receive time (krx) is the kernel's own CLOCK_REALTIME stamp of the
datagram or segment (SO_TIMESTAMPNS, taken when the packet entered the
receiving stack, before the server process was scheduled): the same
instant with the receiver's scheduling delay taken out. Where the kernel
gave no stamp (QUIC: asyncio reads without ancillary data) it is the read
time, and `kernel_stamps` counts the reads that had one.
"""

from __future__ import annotations

import struct
import time
from dataclasses import dataclass, field

from linkemu.errors import LinkemuError
from linkemu.instruments import units_wire as wire


@dataclass
class Sink:
    size: int = wire.MIN_SIZE
    seq: list[int] = field(default_factory=list)
    gen_ns: list[int] = field(default_factory=list)
    rx_ns: list[int] = field(default_factory=list)
    krx_ns: list[int] = field(default_factory=list)
    reads: int = 0
    kernel_stamps: int = 0        # reads that carried a kernel receive stamp
    malformed: int = 0            # UDP datagrams that are not whole units
    hello: wire.Hello | None = None
    end_count: int | None = None  # units the client said it sent (UDP END)
    _rest: bytes = b""
    _distinct: set[int] = field(default_factory=set)   # the seq values in self.seq

    def units(self, data: bytes | memoryview, rx_ns: int | None = None,
              krx_ns: int | None = None) -> None:
        """Whole units back to back (a datagram, or a stream's bytes: a unit
        split across two reads is completed by the next one)."""
        rx = time.time_ns() if rx_ns is None else rx_ns
        self.reads += 1
        if krx_ns is not None:
            self.kernel_stamps += 1
        krx = rx if krx_ns is None else krx_ns
        buf = self._rest + bytes(data) if self._rest else data
        n = len(buf) // self.size
        for k in range(n):
            seq, us = wire.unpack_unit(buf, k * self.size)
            if seq == wire.END_SEQ:
                self.end_count = us
                continue
            self.seq.append(seq)
            self._distinct.add(seq)
            self.gen_ns.append(wire.full_time_ns(us, rx))
            self.rx_ns.append(rx)
            self.krx_ns.append(krx)
        self._rest = bytes(buf[n * self.size:])

    def datagram(self, data: bytes, rx_ns: int | None = None,
                 krx_ns: int | None = None) -> None:
        """One UDP datagram: a hello, a flush, or an END (+ hello)."""
        if data[:4] == wire.HELLO_MAGIC and len(data) == wire.HELLO_SIZE:
            self._take_hello(data)
            return
        if len(data) == self.size + wire.HELLO_SIZE:
            seq, count = wire.unpack_unit(data)
            if seq == wire.END_SEQ:
                self.end_count = count
                self._take_hello(data[self.size:])
                return
        if len(data) == 0 or len(data) % self.size:
            self.malformed += 1
            return
        self.units(data, rx_ns, krx_ns)

    def _take_hello(self, b: bytes) -> None:
        try:
            self.hello = wire.unpack_hello(b)
            self.size = self.hello.size
        except (ValueError, struct.error, LinkemuError):   # foreign: count it, keep serving
            self.malformed += 1

    def stream(self, data: bytes, rx_ns: int | None = None,
               krx_ns: int | None = None) -> None:
        """Bytes of a TCP or QUIC stream: the hello first, then units."""
        if self.hello is None:
            self._rest += bytes(data)
            if len(self._rest) < wire.HELLO_SIZE:
                return
            head, self._rest = self._rest[:wire.HELLO_SIZE], self._rest[wire.HELLO_SIZE:]
            try:
                self.hello = wire.unpack_hello(head)
            except (ValueError, LinkemuError) as e:
                # the peer's bytes, not this command's options: exit 1, no traceback
                raise LinkemuError(f"the client's hello: {e}") from None
            self.size = self.hello.size
            data, self._rest = self._rest, b""
            if not data:
                return
        self.units(data, rx_ns, krx_ns)

    def expected(self) -> int | None:
        if self.end_count is not None:
            return self.end_count
        return self.hello.count if self.hello else None

    def complete(self) -> bool:
        # asked after every datagram: kept O(1) (a set of self.seq each time
        # was quadratic in the run's length)
        exp = self.expected()
        return exp is not None and self.end_count is not None and len(self._distinct) >= exp
