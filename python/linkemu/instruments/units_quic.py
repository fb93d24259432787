"""QUIC for the unit-latency instrument, through aioquic.

One bidirectional stream carries the hello and the units; the client ends
the stream after the last flush and the server closes the connection once
it has read everything. Congestion control: aioquic's "cubic" (aioquic
>= 1.2 ships reno and cubic; its default is reno), chosen on both ends.

The schedule runs in its own thread (precise sleeps); each flush is handed
to the asyncio loop with call_soon_threadsafe, which wakes the loop at
once. Scheduling flushes on the loop itself would be late by up to 1 ms:
epoll's timeout has millisecond resolution.

TLS: the server makes a throw-away self-signed certificate (EC P-256) at
start, and the client does not verify it. The instrument measures latency
between two ends the user controls; it is not meant to authenticate them.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import ssl
import tempfile
import time
from pathlib import Path
from typing import Callable

from linkemu.errors import LinkemuError, UsageError
from linkemu.instruments.units_sink import Sink

ALPN = "linkemu-units"
QUIC_CCS = ("cubic", "reno")
CLOSE_WAIT_S = 30.0
IDLE_TIMEOUT_S = 10.0


def _aioquic():
    try:
        from aioquic.asyncio import connect, serve
        from aioquic.asyncio.protocol import QuicConnectionProtocol
        from aioquic.quic.configuration import QuicConfiguration
        from aioquic.quic import events
    except ImportError as e:
        raise LinkemuError(f"QUIC needs aioquic (pip install aioquic): {e}") from None
    return connect, serve, QuicConnectionProtocol, QuicConfiguration, events


def _config(is_client: bool, cc: str):
    _c, _s, _p, QuicConfiguration, _e = _aioquic()
    if cc not in QUIC_CCS:
        raise UsageError(f"QUIC congestion control '{cc}': aioquic offers {', '.join(QUIC_CCS)}")
    cfg = QuicConfiguration(is_client=is_client, alpn_protocols=[ALPN])
    if not hasattr(cfg, "congestion_control_algorithm"):
        raise LinkemuError("this aioquic has no choice of congestion control (needs >= 1.2)")
    cfg.congestion_control_algorithm = cc
    # A handshake that never completes, or a peer that vanishes, ends the
    # connection after this much silence (a run sends every few ms).
    cfg.idle_timeout = IDLE_TIMEOUT_S
    return cfg


def _self_signed(directory: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "linkemu-units")])
    now = _dt.datetime.now(_dt.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - _dt.timedelta(days=1))
            .not_valid_after(now + _dt.timedelta(days=1))
            .sign(key, hashes.SHA256()))
    cf, kf = directory / "cert.pem", directory / "key.pem"
    cf.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    kf.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                     serialization.PrivateFormat.PKCS8,
                                     serialization.NoEncryption()))
    return cf, kf


# --- server ---------------------------------------------------------------------------

def serve(o, ready: Callable[[], None], cc: str = "cubic") -> Sink:
    return asyncio.run(_serve(o, ready, cc))


async def _serve(o, ready, cc: str) -> Sink:
    _c, serve_, Proto, _Q, events = _aioquic()
    sink = Sink()
    done = asyncio.Event()

    class ServerProtocol(Proto):
        def quic_event_received(self, event) -> None:
            if isinstance(event, events.StreamDataReceived):
                sink.stream(event.data, time.time_ns())
                if event.end_stream:
                    self.close()
                    done.set()
            elif isinstance(event, events.ConnectionTerminated):
                done.set()

    cfg = _config(False, cc)
    with tempfile.TemporaryDirectory(prefix="linkemu-units-") as tmp:
        cf, kf = _self_signed(Path(tmp))
        cfg.load_cert_chain(str(cf), str(kf))
    try:
        server = await serve_(o.bind, o.port, configuration=cfg,
                              create_protocol=ServerProtocol)
    except OSError as e:
        raise LinkemuError(f"cannot bind quic {o.bind} port {o.port}: {e.strerror}") from e
    try:
        ready()
        try:
            await _first_then_done(sink, done, o.start_timeout_s)
        except asyncio.TimeoutError:
            raise LinkemuError(f"no QUIC client within {o.start_timeout_s:g} s") from None
        await asyncio.sleep(0.05)     # let the close go out
    finally:
        server.close()
    return sink


async def _first_then_done(sink: Sink, done: asyncio.Event, start_timeout_s: float) -> None:
    t_end = time.monotonic() + start_timeout_s
    while sink.hello is None and not done.is_set():
        if time.monotonic() > t_end:
            raise asyncio.TimeoutError
        await asyncio.sleep(0.01)
    await done.wait()


# --- client ---------------------------------------------------------------------------

def run_client(o):
    return asyncio.run(_client(o))


async def _client(o):
    from linkemu.instruments.units_schedule import generate
    connect, _s, _P, _Q, _e = _aioquic()
    cfg = _config(True, o.cc)
    cfg.verify_mode = ssl.CERT_NONE
    loop = asyncio.get_running_loop()
    try:
        async with connect(o.host, o.port, configuration=cfg,
                           wait_connected=True) as proto:
            quic = proto._quic
            sid = quic.get_next_available_stream_id()

            def send(b: bytes, end: bool = False) -> None:
                quic.send_stream_data(sid, b, end_stream=end)
                proto.transmit()

            send(o.hello().pack())
            timing = await loop.run_in_executor(
                None, generate, o.schedule, lambda b: loop.call_soon_threadsafe(send, b))
            send(b"", True)
            try:
                await asyncio.wait_for(proto.wait_closed(), CLOSE_WAIT_S)
            except asyncio.TimeoutError:
                raise LinkemuError(f"QUIC server did not close within {CLOSE_WAIT_S:g} s of "
                                   f"the stream's end") from None
            extra = {"cc": cfg.congestion_control_algorithm}
    except ConnectionError as e:
        raise LinkemuError(f"QUIC connection to {o.host} port {o.port} failed: {e}") from e
    return timing, extra
