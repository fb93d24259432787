"""The unit-latency instrument's wire format.

A unit is N bytes (N >= 8): its sequence number (u32, big-endian), its
generation time (u32: CLOCK_REALTIME in microseconds modulo 2^32), then
zero padding. Carrying only the low 32 bits of the time keeps the study's
8-byte unit; the receiver restores the full time from its own clock, which
is unambiguous while the latency is far below 2^31 us (35 minutes).

TCP and QUIC streams start with a hello that tells the server the unit
size and what the client will send; then units follow back to back. A UDP
datagram is one flush: K units, nothing else. The client ends a UDP run
with END datagrams: one unit whose sequence number is END_SEQ and whose
time field holds the number of units sent, followed by the hello (so a
server that missed the hello datagram sent first still learns the
schedule).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from linkemu.errors import UsageError

MIN_SIZE = 8
MAX_SIZE = 65_000
END_SEQ = 0xFFFF_FFFF
# Far below END_SEQ, so that a flush never starts with HELLO_MAGIC either.
MAX_COUNT = 1 << 30
MAX_RUN_ID = (1 << 32) - 1
_UNIT = struct.Struct(">II")
_HELLO = struct.Struct(">4sHHIII")
HELLO_MAGIC = b"LEU1"
HELLO_SIZE = _HELLO.size
_WRAP_US = 1 << 32


@dataclass(frozen=True)
class Hello:
    size: int          # bytes per unit
    flush: int         # units per flush
    interval_ns: int   # generation interval
    count: int         # units the client will send
    run_id: int

    def pack(self) -> bytes:
        return _HELLO.pack(HELLO_MAGIC, self.size, self.flush, self.interval_ns // 1000,
                           self.count, self.run_id)


def unpack_hello(b: bytes) -> Hello:
    magic, size, flush, interval_us, count, run_id = _HELLO.unpack(b[:HELLO_SIZE])
    if magic != HELLO_MAGIC:
        raise ValueError(f"not a linkemu units stream (starts with {magic!r}, expected "
                         f"{HELLO_MAGIC!r})")
    check_size(size)
    return Hello(size, flush, interval_us * 1000, count, run_id)


def check_size(size: int) -> None:
    if not MIN_SIZE <= size <= MAX_SIZE:
        raise UsageError(f"unit size {size} B: must be {MIN_SIZE} .. {MAX_SIZE} (a unit carries "
                         f"a 4-byte sequence number and a 4-byte generation time)")


def pack_unit(seq: int, gen_ns: int, size: int) -> bytes:
    head = _UNIT.pack(seq, (gen_ns // 1000) % _WRAP_US)
    return head if size == MIN_SIZE else head + bytes(size - MIN_SIZE)


def unpack_unit(b: bytes | memoryview, off: int = 0) -> tuple[int, int]:
    """(seq, generation time in us mod 2^32)."""
    return _UNIT.unpack_from(b, off)


def full_time_ns(gen_us_low: int, rx_ns: int) -> int:
    """The generation time whose low 32 bits of microseconds are gen_us_low
    and which lies within 2^31 us of rx_ns (before or after it: two hosts'
    clocks may be off either way)."""
    rx_us = rx_ns // 1000
    diff = (rx_us - gen_us_low) % _WRAP_US
    if diff >= _WRAP_US // 2:
        diff -= _WRAP_US
    return (rx_us - diff) * 1000


def end_marker(sent: int, size: int) -> bytes:
    return _UNIT.pack(END_SEQ, sent) + bytes(size - MIN_SIZE)
