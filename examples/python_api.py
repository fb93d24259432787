#!/usr/bin/env python3
"""linkemu from Python: a bed, a link, traffic, a live change, counters.

Run as root from a built checkout (make build):

    .venv/bin/python examples/python_api.py [BED]

It builds linkemu's own pair of namespaces (bed BED, default "example"),
starts linkemud with 10 ms each way, pings across, serves a file over
HTTP from one side to the other, makes the uplink worse while it runs,
and prints the final counters. Everything is removed on the way out, also
on an error or Ctrl-C. docs/python.md explains each call.
"""

import subprocess
import sys
import time

import linkemu

bed_name = sys.argv[1] if len(sys.argv) > 1 else "example"

with linkemu.Bed(bed_name) as bed, bed.run(a2b="delay 10ms", b2a="delay 10ms", seed=1) as link:
    src, dst = bed.addr("src"), bed.addr("dst")

    # Run a command on one side and wait for it (a CompletedProcess).
    ping = bed.exec("src", ["ping", "-c", "5", "-i", "0.1", dst], check=True)
    rtts = [float(l.split("time=")[1].split()[0]) for l in ping.stdout.splitlines()
            if "time=" in l]
    print(f"ping {src} -> {dst}: RTT min {min(rtts):.1f} ms (the link adds 10 + 10 ms)")
    assert min(rtts) >= 19.95, rtts

    # Start a server on the other side and leave it running (a Popen).
    server = bed.popen("dst", [sys.executable, "-m", "http.server", "--bind", dst, "8080"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        fetch = ("import time, urllib.request as u\n"
                 "for i in range(100):\n"
                 "    try:\n"
                 f"        t = time.monotonic(); u.urlopen('http://{dst}:8080/', timeout=5).read()\n"
                 "        print(round((time.monotonic() - t) * 1e3, 1)); break\n"
                 "    except OSError: time.sleep(0.1)\n")
        took = bed.exec("src", [sys.executable, "-c", fetch], check=True).stdout.strip()
        print(f"HTTP GET over the link: {took} ms")

        # Change the uplink while the daemon runs; the reply comes once the
        # data plane has switched.
        link.set(a2b="delay 50ms")
        print(f"links now: {link.show()}")
        took = bed.exec("src", [sys.executable, "-c", fetch], check=True).stdout.strip()
        print(f"HTTP GET after the change: {took} ms")
    finally:
        server.terminate()
        server.wait()

    # A mistake is refused by the daemon, with its own words, and changes nothing.
    try:
        link.set(b2a="dealy 5ms")
    except linkemu.DaemonRefused as e:
        print(f"refused: {e}")

    # Live counters, typed.
    st = link.stats()
    print(f"so far: a2b {st.a2b.rx} frames in, {st.a2b.tx} out; "
          f"b2a {st.b2a.rx} in, {st.b2a.tx} out")
    time.sleep(0.1)

# Out of the `with`: the daemon has stopped and the bed is gone.
report = link.report
print(report.format())
assert report.ok, report.problems
assert report.a2b.in_flight == 0 and report.a2b.rx == report.a2b.tx + report.a2b.dropped_total
