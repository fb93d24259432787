"""`linkemu capture`: record the frames on linkemud's ports with the stock
`dpdk-dumpcap`, and check and merge what it wrote (pcapng, through the
python-pcapng library).

dpdk-dumpcap is a DPDK secondary process: it attaches to the daemon's
shared memory (EAL file prefix `linkemu-BED`), asks it over the
multi-process channel to copy the frames of the chosen ports into a ring,
and writes them as pcapng. linkemud has to have called rte_pdump_init()
for that to work.

Which port and which direction (port 0 = side A = src, port 1 = side B = dst):

    --dir a2b --port in    port 0, frames it receives   (what src sent into the link)
    --dir a2b --port out   port 1, frames it transmits  (what the link delivered to dst)
    --dir b2a --port in    port 1, frames it receives
    --dir b2a --port out   port 0, frames it transmits

dumpcap captures both directions of a port. We keep one with a capture
filter on the sender's MAC address (a frame of a2b carries src's MAC as
its Ethernet source, on both ports: linkemud forwards frames unchanged),
so dumpcap's count (-c) counts only the frames asked for; afterwards the
pcapng's own direction flags (inbound = RX, outbound = TX) are checked,
and a file with more than COUNT frames (dumpcap stops after a burst of up
to 32) is cut to exactly COUNT.

The dpdk-dumpcap of DPDK 22.11 captures one port per process (it keeps
only the last -i), so each port gets its own dumpcap, all started and
stopped together, and their files are merged in time order.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import stat
import struct
import subprocess
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from pcapng import FileScanner, FileWriter
from pcapng import blocks as ngblocks
from pcapng.exceptions import PcapngException

from linkemu import newfile
from linkemu.bed import netns
from linkemu.bed.cpus import tool_cpus
from linkemu.bed.interrupts import interruptible, shielded
from linkemu.errors import LinkemuError, UsageError

DUMPCAP = "dpdk-dumpcap"
READY_TIMEOUT_S = 30.0
STOP_GRACE_S = 10.0
WHOLE_FRAME_SNAPLEN = 262144     # libpcap's MAXIMUM_SNAPLEN: what -s 0 means to tcpdump

# --- pcapng ------------------------------------------------------------------------
#
# The format (blocks, options, byte order, both directions' interfaces) is
# python-pcapng's: its FileScanner reads and its FileWriter writes every
# block dumpcap writes (SHB, one IDB per port, EPB with epb_flags, ISB). Ours
# is only what it does not give: a packet's time as exact integer
# nanoseconds (its .timestamp is a float, which at 1.7e9 s keeps only about
# 0.2 us), and the merge of several dumpcaps' files into one in time order.

INBOUND, OUTBOUND = 1, 2                 # epb_flags bits 0-1 (inbound/outbound)
NS_PER_S = 1_000_000_000
# python-pcapng keeps if_tsresol raw and warns (DeprecationWarning) about
# its own schema whenever it is read or written; the warning says nothing
# about the file, so it is silenced where we touch that option.
_TSRESOL_WARNING = "Field type should not be"


@dataclass
class Packet:
    """One captured frame: the library's EnhancedPacket block, with its
    interface, exact time and direction."""
    block: ngblocks.EnhancedPacket
    ts_ns: int
    flags: int | None = None        # epb_flags, None when absent

    @property
    def interface(self) -> int:
        return self.block.interface_id

    @property
    def data(self) -> bytes:
        return bytes(self.block.packet_data)

    @property
    def origlen(self) -> int:
        return self.block.packet_len

    @property
    def direction(self) -> str | None:
        """'in' (received on the port), 'out' (transmitted), or None."""
        if self.flags is None:
            return None
        return {INBOUND: "in", OUTBOUND: "out"}.get(self.flags & 3)


@dataclass
class Pcapng:
    """One section of a pcapng file, as the library read it."""
    section: ngblocks.SectionHeader
    interfaces: list[ngblocks.InterfaceDescription] = field(default_factory=list)
    packets: list[Packet] = field(default_factory=list)
    stats: list[ngblocks.InterfaceStatistics] = field(default_factory=list)


class PcapngError(LinkemuError):
    pass


def ticks_per_s(idb: ngblocks.InterfaceDescription) -> int:
    """An interface's timestamp unit from its if_tsresol byte (pcapng 4.2:
    MSB clear: 10^-n s, MSB set: 2^-n s; absent: microseconds)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", _TSRESOL_WARNING, DeprecationWarning)
        raw = idb.options.get_raw("if_tsresol") if "if_tsresol" in idb.options else b""
    if not raw:
        return 1_000_000
    r = raw[0]
    return 2 ** (r & 0x7F) if r & 0x80 else 10 ** r


def exact_ns(ticks_per_s: int, offset_s: int, ts_high: int, ts_low: int) -> int:
    """A timestamp in integer nanoseconds, with the interface's if_tsoffset
    (whole seconds) added: exact for every decimal resolution down to 10^-9,
    rounded down for finer ones. Integers only: no float on the way."""
    return offset_s * NS_PER_S + ((ts_high << 32) | ts_low) * NS_PER_S // ticks_per_s


def _clock(idb: ngblocks.InterfaceDescription) -> tuple[int, int]:
    """(ticks per second, offset in seconds) of an interface."""
    return ticks_per_s(idb), (idb.options["if_tsoffset"] if "if_tsoffset" in idb.options else 0)


def _flags(blk: ngblocks.EnhancedPacket) -> int | None:
    return int(blk.options["epb_flags"]) if "epb_flags" in blk.options else None


def read_pcapng(path: str | os.PathLike) -> Pcapng:
    """Read a one-section pcapng file with python-pcapng: its interfaces,
    Enhanced Packet Blocks (with exact times) and statistics blocks."""
    out = None
    clocks = []
    try:
        with open(path, "rb") as f, warnings.catch_warnings():
            warnings.filterwarnings("ignore", _TSRESOL_WARNING, DeprecationWarning)
            for blk in FileScanner(f):
                if isinstance(blk, ngblocks.SectionHeader):
                    if out is not None:
                        raise PcapngError(f"{path}: more than one section (not supported)")
                    out = Pcapng(blk)
                elif isinstance(blk, ngblocks.InterfaceDescription):
                    out.interfaces.append(blk)
                    clocks.append(_clock(blk))
                elif isinstance(blk, ngblocks.EnhancedPacket):
                    if blk.interface_id >= len(out.interfaces):
                        raise PcapngError(f"{path}: packet {len(out.packets)} names interface "
                                          f"{blk.interface_id}, which the file does not describe")
                    ts = exact_ns(*clocks[blk.interface_id], blk.timestamp_high, blk.timestamp_low)
                    out.packets.append(Packet(blk, ts, _flags(blk)))
                elif isinstance(blk, ngblocks.InterfaceStatistics):
                    out.stats.append(blk)
                elif isinstance(blk, (ngblocks.SimplePacket, ngblocks.ObsoletePacket)):
                    raise PcapngError(f"{path}: a {type(blk).__name__} block (linkemu reads "
                                      f"Enhanced Packet Blocks, as dpdk-dumpcap writes)")
    except (PcapngException, ValueError) as e:
        raise PcapngError(f"{path}: not a readable pcapng file: {e}") from e
    if out is None:
        raise PcapngError(f"{path}: empty (no section header)")
    return out


def _copy(section: ngblocks.SectionHeader, blk, **change):
    """blk as a member of another section (IDBs are numbered there in the
    order they are copied), its fields and options as they were but for
    change."""
    fields = {name: getattr(blk, name) for name, _f, _d in blk.schema
              if name not in ("options", "captured_len")}
    fields.update(change)
    return section.new_member(type(blk), options=dict(blk.options.iter_all_items()), **fields)


def _same_interface(a: ngblocks.InterfaceDescription, b: ngblocks.InterfaceDescription) -> bool:
    # Name, link type, snap length and clock (resolution, offset): a packet
    # of either file then means the same time under either IDB. Other
    # options may differ in bytes (each dumpcap records its own view).
    return ((a.link_type, a.snaplen, a.options.get("if_name"), _clock(a))
            == (b.link_type, b.snaplen, b.options.get("if_name"), _clock(b)))


def merge(files: list[Pcapng], keeps: list[list[Packet]], path: str | os.PathLike,
          mode: int | None = None) -> None:
    """One pcapng from several captures: the first file's section header,
    the interfaces of all (shared when the files describe the same ones, as
    dumpcap 22.11 does: one IDB per DPDK port in every file), the kept
    packets of all in time order (exact nanoseconds; ties keep file order),
    then the statistics blocks. mode: the file's permission bits (None:
    as the umask makes them)."""
    if not files:
        raise PcapngError("nothing to merge")
    first = files[0]
    same = all(len(f.interfaces) == len(first.interfaces)
               and all(map(_same_interface, f.interfaces, first.interfaces)) for f in files)
    shb = ngblocks.SectionHeader(endianness=first.section.endianness,
                                 options=dict(first.section.options.iter_all_items()))
    base = []
    for i, f in enumerate(files):
        base.append(0 if same else len(shb.interfaces))
        if i == 0 or not same:
            for idb in f.interfaces:
                _copy(shb, idb)
    packets = []
    for i, (f, keep) in enumerate(zip(files, keeps)):
        for n, p in enumerate(keep):
            packets.append((p.ts_ns, i, n, p.block))
    packets.sort(key=lambda x: x[:3])
    stats = [(blk, base[i]) for i, f in enumerate(files) for blk in f.stats]
    # newfile: no half-written file beside the capture, none followed
    # through a planted symlink.
    with newfile.replacing(path, mode) as out, warnings.catch_warnings():
        warnings.filterwarnings("ignore", _TSRESOL_WARNING, DeprecationWarning)
        w = FileWriter(out, shb)
        for _ts, i, _n, blk in packets:
            w.write_block(_copy(shb, blk, interface_id=blk.interface_id + base[i]))
        for blk, b in stats:
            w.write_block(_copy(shb, blk, interface_id=blk.interface_id + b))


def ipv4_info(frame: bytes) -> dict | None:
    """Ethernet/IPv4 header fields of a frame, or None if it is not IPv4:
    {"src", "dst", "proto", and for ICMP "icmp_type", for UDP "sport", "dport"}."""
    if len(frame) < 34:
        return None
    ethertype = struct.unpack_from("!H", frame, 12)[0]
    off = 14
    if ethertype == 0x8100 and len(frame) >= 38:
        ethertype = struct.unpack_from("!H", frame, 16)[0]
        off = 18
    if ethertype != 0x0800:
        return None
    ihl = (frame[off] & 0x0F) * 4
    proto = frame[off + 9]
    info = {"src": ".".join(map(str, frame[off + 12:off + 16])),
            "dst": ".".join(map(str, frame[off + 16:off + 20])), "proto": proto}
    l4 = off + ihl
    if proto == 1 and len(frame) > l4:
        info["icmp_type"] = frame[l4]
        if frame[l4] in (0, 8) and len(frame) >= l4 + 8:     # echo: id and sequence
            info["icmp_id"], info["icmp_seq"] = struct.unpack_from("!HH", frame, l4 + 4)
    elif proto == 17 and len(frame) >= l4 + 4:
        info["sport"], info["dport"] = struct.unpack_from("!HH", frame, l4)
    return info


def ether_src(frame: bytes) -> str:
    return ":".join(f"{b:02x}" for b in frame[6:12])


# --- which port, which direction -------------------------------------------------------

PORT_CHOICES = ("in", "out", "both")
DIR_CHOICES = ("a2b", "b2a")


def port_plan(direction: str, port: str) -> list[tuple[int, str]]:
    """[(DPDK port id, 'in' | 'out')] for a direction and a side of the link."""
    if direction not in DIR_CHOICES:
        raise UsageError(f"unknown direction '{direction}' (a2b or b2a)")
    if port not in PORT_CHOICES:
        raise UsageError(f"unknown port '{port}' (in, out or both)")
    in_port, out_port = (0, 1) if direction == "a2b" else (1, 0)
    plan = []
    if port in ("in", "both"):
        plan.append((in_port, "in"))
    if port in ("out", "both"):
        plan.append((out_port, "out"))
    return plan


def sender_mac(bed, direction: str) -> str:
    """The Ethernet source of the direction's frames: the sending
    namespace's interface (src for a2b, dst for b2a)."""
    ns = bed.ns_src if direction == "a2b" else bed.ns_dst
    try:
        return netns.link_mac(bed.ns_dev, ns)
    except LinkemuError as e:
        raise LinkemuError(f"cannot read the MAC address of {bed.ns_dev} in {ns} "
                           f"(is test bed '{bed.name}' up?): {e}") from e


def build_filter(mac: str | None, user_filter: str | None) -> str | None:
    parts = []
    if mac:
        parts.append(f"ether src {mac}")
    if user_filter:
        parts.append(f"({user_filter})")
    return " and ".join(parts) or None


def find_dumpcap() -> str:
    found = shutil.which(DUMPCAP) or ("/usr/bin/dpdk-dumpcap"
                                       if os.access("/usr/bin/dpdk-dumpcap", os.X_OK) else None)
    if not found:
        raise LinkemuError("dpdk-dumpcap not found: install the Debian package dpdk "
                           "(apt-get install dpdk)")
    return found


def build_argv(dumpcap: str, file_prefix: str, port: int, out: str,
               count: int | None = None, snaplen: int | None = None,
               bpf: str | None = None) -> list[str]:
    # One port per dumpcap: 22.11's dpdk-dumpcap captures only the last -i.
    argv = [dumpcap, f"--file-prefix={file_prefix}", "-i", str(port)]
    # -p: leave the ports' promiscuous mode alone (linkemud already gets
    # every frame of its veth; dumpcap must not reconfigure them).
    argv += ["-p", "-n", "-w", out]
    if count:
        argv += ["-c", str(count)]
    if snaplen is not None:
        # 0: whole frames. Not passed as 0: libpcap compiles no filter for
        # a snap length of 0 ("snaplen of 0 rejects all packets").
        argv += ["-s", str(snaplen or WHOLE_FRAME_SNAPLEN)]
    if bpf:
        argv += ["-f", bpf]
    cpus = tool_cpus()
    # dumpcap polls its ring in a loop: keep it off linkemud's lcore.
    return (["taskset", "-c", cpus] + argv) if cpus else argv


# --- running dumpcap ---------------------------------------------------------------

@dataclass
class CaptureResult:
    path: str
    packets: int                     # frames in the file we leave
    written: int                     # frames dumpcap wrote
    removed_direction: int           # frames of the other direction we took out
    trimmed: int                     # frames past COUNT (per port) we took out
    ports: list[tuple[int, str]]
    per_port: dict[int, int]         # frames kept per DPDK port
    filter: str | None
    dumpcap_stats: list[dict]        # per interface: {"name", "received", "dropped"}
    duration_s: float
    argv: list[list[str]]
    stderr: str = ""
    daemon_exited: bool = False      # linkemud went away: the capture ended early


# What dpdk-dumpcap says when it stops because the primary (linkemud) has
# exited; it then writes no received/dropped counts.
PRIMARY_GONE = "Primary process is no longer active"
_FILTER_REFUSED_RE = re.compile(r"pcap filter string not valid \((.*)\)")
_STATS_RE = re.compile(r"Packets received/dropped on interface '([^']*)': (\d+)/(\d+)")


def _explain_failure(rc: int, err: str, file_prefix: str, bpf: str | None = None) -> str:
    tail = "\n".join("    " + l for l in err.strip().splitlines()[-8:])
    refused = _FILTER_REFUSED_RE.search(err)
    if refused:
        # Shown whole: libpcap names the word it choked on, and the filter
        # holds our part (the sender's MAC) as well as -f.
        return f"the capture filter '{bpf}' is not valid libpcap syntax: {refused.group(1)}"
    if "mp_pdump" in err or ("pdump" in err.lower() and "failed" in err.lower()):
        return (f"the DPDK process with file prefix '{file_prefix}' does not serve packet "
                f"capture (linkemud must call rte_pdump_init); dpdk-dumpcap said:\n{tail}")
    if "EAL init failed" in err or "No Ethernet ports" in err:
        return (f"dpdk-dumpcap could not attach to the DPDK process with file prefix "
                f"'{file_prefix}' (is linkemud running?):\n{tail}")
    if "Failed to allocate" in err or "Mempool" in err:
        return (f"dpdk-dumpcap could not share buffers with the daemon (the primary and "
                f"dumpcap must load the same DPDK drivers in the same order):\n{tail}")
    return f"dpdk-dumpcap exited with code {rc}:\n{tail}"


class _Dumpcap:
    """One dpdk-dumpcap process; knows when it captures (it writes
    "Packets captured: " to stderr once its callbacks run in the daemon)."""

    def __init__(self, argv: list[str], port: int, out: Path, started: list | None = None):
        """started: the list this dumpcap joins as soon as it runs, so that
        an interrupt that comes while it starts still finds it to stop."""
        self.argv, self.port, self.out = argv, port, out
        self.err: list[bytes] = []
        self.ready = threading.Event()
        self.threads: list[threading.Thread] = []
        out.unlink(missing_ok=True)   # dumpcap opens without O_TRUNC
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, start_new_session=True)
        if started is not None:
            started.append(self)
        for target in (self._pump_stderr, self._drain_stdout):
            t = threading.Thread(target=target, daemon=True)
            t.start()
            self.threads.append(t)

    def _pump_stderr(self) -> None:
        seen = b""
        for chunk in iter(lambda: self.proc.stderr.read1(4096), b""):
            self.err.append(chunk)
            seen = (seen + chunk)[-4096:]
            if not self.ready.is_set() and b"Packets captured" in seen:
                self.ready.set()

    def _drain_stdout(self) -> None:
        for _ in iter(lambda: self.proc.stdout.read1(4096), b""):
            pass

    @property
    def stderr(self) -> str:
        return b"".join(self.err).decode(errors="replace")

    def interrupt(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGINT)
            except ProcessLookupError:
                pass

    def stop(self) -> None:
        """SIGINT (dumpcap then disables its callbacks in the daemon and
        closes the file), SIGKILL only if it does not exit."""
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGINT)
                self.proc.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for t in self.threads:
            t.join(5)


def output_path(out: str | os.PathLike) -> Path:
    """The file -w names, refused before any dumpcap runs if it names
    none: the capture would be lost at the end (a directory cannot be
    replaced by the file; a trailing '/' would have written a file of that
    name)."""
    text = os.fspath(out)
    if not text:
        raise UsageError("-w needs a file name")
    path = Path(text)
    if text.endswith("/") or path.is_dir():
        raise UsageError(f"-w {text}: is a directory; name a file in it "
                         f"(e.g. {text.rstrip('/')}/capture.pcapng)")
    if not path.parent.is_dir():
        raise UsageError(f"-w {text}: directory {path.parent} does not exist")
    return path


def capture(bed, out: str | os.PathLike, count: int | None = None, port: str = "out",
            direction: str = "a2b", duration: float | None = None,
            snaplen: int | None = None, user_filter: str | None = None,
            file_prefix: str | None = None, by_direction: bool = True,
            ready_timeout: float = READY_TIMEOUT_S, on_ready=None,
            stop_event: threading.Event | None = None) -> CaptureResult:
    """Run dpdk-dumpcap against the bed's daemon and leave a checked pcapng.

    Stops after count frames (per port), or duration seconds from when the
    capture is running, or when stop_event is set / on Ctrl-C
    (KeyboardInterrupt), whichever comes first. on_ready() is called once
    every dumpcap captures. by_direction=False keeps both directions of the
    chosen ports.

    SIGTERM and SIGHUP stop it as Ctrl-C does (the file is written), and
    stopping the dumpcaps is not cut short by a second one: each runs in a
    session of its own, so nothing but us would ever stop it."""
    with interruptible():
        return _capture(bed, out, count, port, direction, duration, snaplen, user_filter,
                        file_prefix, by_direction, ready_timeout, on_ready, stop_event)


def _capture(bed, out, count, port, direction, duration, snaplen, user_filter, file_prefix,
             by_direction, ready_timeout, on_ready, stop_event) -> CaptureResult:
    if count is not None and count <= 0:
        raise UsageError("-c must be at least 1")
    if duration is not None and duration <= 0:
        raise UsageError("--duration must be more than 0")
    plan = port_plan(direction, port)
    out = output_path(out)
    prefix = file_prefix or bed.file_prefix
    mac = sender_mac(bed, direction) if by_direction else None
    bpf = build_filter(mac, user_filter)
    dumpcap = find_dumpcap()
    with _private_dir_beside(out) as work:
        caps: list[_Dumpcap] = []
        t_start = time.monotonic()
        try:
            for p, _d in plan:
                tmp = work / f"port{p}.pcapng"
                _Dumpcap(build_argv(dumpcap, prefix, p, str(tmp), count, snaplen, bpf), p, tmp,
                         caps)
            deadline = time.monotonic() + ready_timeout
            while not all(c.ready.is_set() for c in caps):
                if any(c.proc.poll() is not None and not c.ready.is_set() for c in caps):
                    break
                if time.monotonic() > deadline:
                    raise LinkemuError(f"dpdk-dumpcap did not start capturing within "
                                       f"{ready_timeout:.0f} s:\n"
                                       + "".join(c.stderr for c in caps)[-800:])
                time.sleep(0.01)
            if all(c.ready.is_set() for c in caps):
                t_start = time.monotonic()
                if on_ready:
                    on_ready()
                stop_at = t_start + duration if duration else None
                while any(c.proc.poll() is None for c in caps):
                    if stop_at is not None and time.monotonic() >= stop_at:
                        break
                    if stop_event is not None and stop_event.is_set():
                        break
                    time.sleep(0.01)
        except KeyboardInterrupt:
            pass
        finally:
            with shielded():
                for c in caps:        # all at once: the ports' captures end together
                    c.interrupt()
                for c in caps:
                    c.stop()
                elapsed = time.monotonic() - t_start
                failed = [c for c in caps if c.proc.returncode not in (0, -signal.SIGINT, 130)
                          or not c.ready.is_set()]
        if failed:
            c = failed[0]
            raise LinkemuError(_explain_failure(c.proc.returncode, c.stderr, prefix, bpf))
        return _finish(out, caps, plan, count, bpf, elapsed, by_direction)


@contextlib.contextmanager
def _private_dir_beside(out: Path):
    """Within: a new directory only we can enter, beside the output (same
    filesystem: a capture may be large), for dumpcap's files; removed at
    the end with whatever is in it. At a fixed name beside the output
    ('.NAME.portN'), a symlink planted there would be written through, as
    root."""
    work = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}."))
    try:
        yield work
    finally:
        with shielded():
            shutil.rmtree(work, ignore_errors=True)


def _finish(out: Path, caps, plan, count, bpf, elapsed, by_direction: bool) -> CaptureResult:
    """Check each dumpcap's file: keep the frames of the wanted direction,
    at most count per port; write them, merged, to out."""
    files, keeps = [], []
    removed = trimmed = written = 0
    per_port: dict[int, int] = {}
    stats = []
    for c, (port_id, want) in zip(caps, plan):
        if not c.out.exists():
            raise LinkemuError(f"dpdk-dumpcap wrote no file {c.out}:\n{c.stderr[-800:]}")
        pc = read_pcapng(c.out)
        written += len(pc.packets)
        keep = []
        for p in pc.packets:
            if by_direction and p.direction is not None and p.direction != want:
                removed += 1
                continue
            keep.append(p)
        if count is not None and len(keep) > count:
            trimmed += len(keep) - count
            keep = keep[:count]
        per_port[port_id] = len(keep)
        files.append(pc)
        keeps.append(keep)
        stats += [{"name": m.group(1), "received": int(m.group(2)), "dropped": int(m.group(3))}
                  for m in _STATS_RE.finditer(c.stderr)]
    # dumpcap makes its file private (0600: frames can carry anything);
    # the merged file keeps that, whatever the umask would give.
    merge(files, keeps, out, mode=stat.S_IMODE(caps[0].out.stat().st_mode))
    return CaptureResult(str(out), sum(per_port.values()), written, removed, trimmed, plan,
                         per_port, bpf, stats, elapsed, [c.argv for c in caps],
                         "".join(c.stderr for c in caps),
                         any(PRIMARY_GONE in c.stderr for c in caps))


def describe_plan(direction: str, plan: list[tuple[int, str]]) -> str:
    side = {0: "A/src", 1: "B/dst"}
    return ", ".join(f"port {p} ({side[p]}) {'RX' if d == 'in' else 'TX'}" for p, d in plan)
