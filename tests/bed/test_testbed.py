"""`linkemu testbed up|down|status` on the session's bed "lt"."""

from __future__ import annotations

import pytest

import ipaddress
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from kit import dpdk_only, leftovers, linkemu, suite_bed
from linkemu.bed import netns, paths, testbed

BED = suite_bed(__file__)

TEST_NET = ipaddress.ip_network("198.18.0.0/15")
OFFLOADS = ("rx-checksumming", "tx-checksumming", "tcp-segmentation-offload",
            "generic-segmentation-offload", "generic-receive-offload")


def status() -> dict:
    cp = linkemu("testbed", "status", "--bed", BED, "--json")
    assert cp.returncode == 0, cp.stderr
    return json.loads(cp.stdout)


def ifindex(dev: str, ns: str | None = None) -> int:
    return json.loads(netns.run((["ip"] if ns is None else ["ip", "-n", ns])
                                + ["-j", "link", "show", "dev", dev]).stdout)[0]["ifindex"]


def test_up_creates_namespaces_veths_addresses(bed_up):
    st = status()
    assert st["up"] is True and st["bed"] == BED
    assert sorted(st["namespaces"]) == sorted([f"{BED}-src", f"{BED}-dst"])
    assert st["interfaces"]["a"]["host"] == f"{BED}-a" and st["interfaces"]["a"]["dpdk_port"] == 0
    assert st["interfaces"]["b"]["host"] == f"{BED}-b" and st["interfaces"]["b"]["dpdk_port"] == 1
    assert st["daemon"] == {"running": False, "pid": None}
    # Cross-check with ip itself, not only our own status.
    listed = netns.run(["ip", "netns", "list"]).stdout
    assert f"{BED}-src" in listed and f"{BED}-dst" in listed
    for host in (f"{BED}-a", f"{BED}-b"):
        info = netns.link_info(host)
        assert info is not None and "UP" in info["flags"]
        assert not [a for a in info.get("addr_info", []) if a["family"] == "inet"], \
            "host veths carry no IPv4 address (the emulator is a bridge)"
    for role, ns in (("src", bed_up.ns_src), ("dst", bed_up.ns_dst)):
        info = netns.link_info("eth0", ns)
        have = [f"{a['local']}/{a['prefixlen']}" for a in info["addr_info"]
                if a["family"] == "inet"]
        assert have == [st["addresses"][role]]
        assert "UP" in info["flags"]
        assert "UP" in netns.link_info("lo", ns)["flags"]
    assert paths.testbed_state_file(BED).is_file()


def test_addresses_are_from_the_benchmarking_range(bed_up):
    st = status()
    for cidr in st["addresses"].values():
        assert ipaddress.ip_interface(cidr).ip in TEST_NET, cidr
    for ns in (bed_up.ns_src, bed_up.ns_dst):
        for a in netns.link_info("eth0", ns)["addr_info"]:
            assert a["family"] == "inet", f"{ns}: unexpected {a} (IPv6 must be off)"
            assert ipaddress.ip_address(a["local"]) in TEST_NET


def test_no_default_route(bed_up):
    for ns in (bed_up.ns_src, bed_up.ns_dst):
        out = netns.run(["ip", "-n", ns, "route", "show", "default"]).stdout
        assert out.strip() == "", f"{ns} has a default route: {out}"
        out6 = netns.run(["ip", "-n", ns, "-6", "route", "show"]).stdout
        assert out6.strip() == "", f"{ns} has IPv6 routes: {out6}"


def test_offloads_are_off_on_every_veth_end(bed_up):
    ends = [(f"{BED}-a", None), (f"{BED}-b", None),
            ("eth0", bed_up.ns_src), ("eth0", bed_up.ns_dst)]
    for dev, ns in ends:
        cmd = ["ethtool", "-k", dev]
        out = netns.run(netns.ns_exec_argv(ns, cmd) if ns else cmd).stdout
        feats = netns.parse_ethtool_features(out)
        on = [f for f in OFFLOADS if feats.get(f) is not False]
        assert not on, f"{ns or 'host'}/{dev}: still on: {on}"


def test_namespace_receive_work_is_steered_off_the_daemon_cpu(bed_up):
    """RPS on each namespace's veth end points at the tool CPUs, so the
    kernel's receive path does not time-slice against the polling lcore."""
    from linkemu.bed.cpus import default_lcores, tool_cpu_mask
    mask = tool_cpu_mask()
    if mask is None:
        pytest.skip("one CPU: nothing to steer to")
    for ns in (bed_up.ns_src, bed_up.ns_dst):
        got = netns.run(netns.ns_exec_argv(ns, ["cat", "/sys/class/net/eth0/queues/rx-0/rps_cpus"])).stdout
        value = int(got.strip().replace(",", ""), 16)
        assert value == int(mask, 16), f"{ns}: rps_cpus {got.strip()}, want {mask}"
        assert not value & (1 << int(default_lcores())), f"{ns}: RPS includes the daemon's CPU"


def test_static_neighbours_so_no_arp_crosses(bed_up):
    out = netns.run(["ip", "-n", bed_up.ns_src, "neigh", "show", bed_up.addr_dst]).stdout
    assert "PERMANENT" in out, out


def test_up_is_idempotent(bed_up):
    before = {d: ifindex(d) for d in (f"{BED}-a", f"{BED}-b")}
    cp = linkemu("testbed", "up", "--bed", BED)
    assert cp.returncode == 0, cp.stderr
    assert "up" in cp.stdout
    after = {d: ifindex(d) for d in (f"{BED}-a", f"{BED}-b")}
    assert before == after, "up on a built bed must not recreate it"
    assert status()["up"] is True


def test_down_removes_everything_and_twice_is_fine(bed_up):
    cp = linkemu("testbed", "down", "--bed", BED)
    assert cp.returncode == 0, cp.stderr
    assert leftovers(BED) == []
    assert status()["up"] is False
    cp = linkemu("testbed", "down", "--bed", BED)
    assert cp.returncode == 0, cp.stderr
    assert "nothing to remove" in cp.stdout


def test_down_without_state_file(bed_up):
    """down finds everything by name even if /run/linkemu/lt was wiped."""
    paths.testbed_state_file(BED).unlink()
    cp = linkemu("testbed", "down", "--bed", BED)
    assert cp.returncode == 0, cp.stderr
    assert leftovers(BED) == []


def test_up_repairs_a_half_built_bed(bed_up):
    netns.run(["ip", "link", "del", f"{BED}-b"])      # as if a crash mid-setup
    assert status()["up"] is False
    cp = linkemu("testbed", "up", "--bed", BED)
    assert cp.returncode == 0, cp.stderr
    assert status()["up"] is True


STAND_IN = textwrap.dedent("""\
    #!{python}
    # Stand-in for a linkemud whose controller died: ignores SIGTERM, so
    # `down` must escalate to SIGKILL.
    import signal, time
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print("linkemud: ready", flush=True)
    time.sleep(600)
    """)


def test_down_after_crash_kills_orphan_daemon_and_dpdk_files(bed_up, tmp_path):
    """The CLI that started a daemon was killed (-9): the daemon lives on,
    holding hugepage files. down must stop it and remove its DPDK files."""
    fake = tmp_path / "linkemud"
    fake.write_text(STAND_IN.format(python=sys.executable))
    fake.chmod(0o755)
    b = testbed.bed_for(BED)
    p = subprocess.Popen([str(fake), "-l", "1", "--file-prefix", b.file_prefix],
                         stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        paths.daemon_pid_file(BED).write_text(f"{p.pid}\n")
        rt = paths.DPDK_RUN_ROOT / b.file_prefix
        rt.mkdir(parents=True, exist_ok=True)
        (rt / "config").write_text("")
        hp = Path("/dev/hugepages") / f"{b.file_prefix}map_0"
        if Path("/dev/hugepages").is_dir():
            hp.write_bytes(b"")
        # It prints once its SIGTERM handler is in place (a fixed sleep was
        # too short when Python started slowly on a loaded CI machine).
        assert p.stdout.readline() == "linkemud: ready\n"
        assert status()["daemon"] == {"running": True, "pid": p.pid}
        t0 = time.monotonic()
        cp = linkemu("testbed", "down", "--bed", BED)
        assert cp.returncode == 0, cp.stderr
        assert f"linkemud pid {p.pid} killed" in cp.stdout
        assert time.monotonic() - t0 >= testbed.DAEMON_STOP_GRACE_S - 0.5
        p.wait(5)
        assert leftovers(BED) == []
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        p.stdout.close()


def _kill9(pid: int) -> None:
    """SIGKILL, as a crash: the daemon cleans nothing up. Waits (up to 5 s)
    until the process is gone."""
    os.kill(pid, 9)
    deadline = time.monotonic() + 5
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def test_down_after_daemon_kill9(bed_up, linkemud_bin):
    """A real linkemud killed with -9 leaves its EAL runtime dir and hugepage
    files (and, with af_xdp, possibly an XDP program); down removes them."""
    cp = linkemu("run", "--bed", BED, "--detach")
    assert cp.returncode == 0, cp.stderr
    pid = status()["daemon"]["pid"]
    _kill9(pid)
    cp = linkemu("testbed", "down", "--bed", BED)
    assert cp.returncode == 0, cp.stderr
    assert leftovers(BED) == []
    # The bed comes back up cleanly after such a crash.
    cp = linkemu("testbed", "up", "--bed", BED)
    assert cp.returncode == 0, cp.stderr


def test_up_after_daemon_kill9_frees_its_pages_first(bed_up, linkemud_bin):
    """A real linkemud killed with -9, then `up` without a `down`: the
    dead daemon's hugepage files kept their pages taken, and `up` counted
    them as used (and reserved more when too few were left). Now it
    removes them first and says so; `run` works again after."""
    dpdk_only("hugepage files are linkemud's (EAL); linkemuk uses none")
    from linkemu.bed import hugepages
    b = testbed.bed_for(BED)
    free_before = hugepages.read_state().free
    cp = linkemu("run", "--bed", BED, "--detach")
    assert cp.returncode == 0, cp.stderr
    pid = status()["daemon"]["pid"]
    assert list(Path("/dev/hugepages").glob(f"{b.file_prefix}map_*")), "no hugepage files to leave"
    _kill9(pid)
    cp = linkemu("testbed", "up", "--bed", BED)
    assert cp.returncode == 0, cp.stderr
    assert not list(Path("/dev/hugepages").glob(f"{b.file_prefix}map_*"))
    assert hugepages.read_state().free == free_before
    said = [l for l in cp.stderr.splitlines() if "hugepage files" in l]
    assert len(said) == 1 and f"bed '{BED}'" in said[0], cp.stderr
    cp = linkemu("run", "--bed", BED, "--detach")
    assert cp.returncode == 0, cp.stderr
    stop = linkemu("stop", "--bed", BED)
    assert stop.returncode == 0, stop.stderr


def test_bad_bed_name_is_a_usage_error():
    for name in ("Bad", "toolongname", "a-b", "le"):
        cp = linkemu("testbed", "status", "--bed", name)
        assert cp.returncode == 2, (name, cp.stdout, cp.stderr)
        assert name in cp.stderr or "reserved" in cp.stderr


def test_status_text(bed_up):
    cp = linkemu("testbed", "status", "--bed", BED)
    assert cp.returncode == 0
    assert f"test bed '{BED}': up" in cp.stdout
