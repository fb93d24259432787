"""The programs a benchmark starts, stopped however the benchmark ends.

A busy-polling linkemud or testpmd left behind by a benchmark stopped with
SIGTERM or Ctrl-C takes a whole CPU until someone kills it, and its EAL
files stay in /var/run/dpdk. `running()` stops the program (SIGINT, as
its own exit path expects, then SIGKILL) and removes its EAL files when
the block ends, by an error or an interrupt too; `run_interruptible()`
runs a benchmark's body with SIGTERM unwinding like Ctrl-C
(`interruptible()` from linkemu.bed), so those blocks do end."""
import contextlib
import os
import signal
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
from linkemu.bed.interrupts import interruptible  # noqa: E402
from linkemu.bed.testbed import remove_dpdk_leftovers  # noqa: E402
from linkemu.errors import UsageError  # noqa: E402


def eal_prefix(tag):
    """An EAL --file-prefix of this benchmark's own (default 'rte' would be
    shared with anything else run without one)."""
    return f"{tag}{os.getpid()}"


def stop(p, timeout=10.0):
    """SIGINT, then SIGKILL when it has not ended within `timeout` s."""
    if p.poll() is not None:
        return
    p.send_signal(signal.SIGINT)
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


@contextlib.contextmanager
def running(argv, prefix=None, **kw):
    """Popen(argv) for the block; stopped at its end (normal end included:
    a caller that stopped it itself loses nothing), EAL files of `prefix`
    removed."""
    p = subprocess.Popen(argv, **kw)
    try:
        yield p
    finally:
        stop(p)
        if prefix:
            remove_dpdk_leftovers(prefix)


def run_interruptible(measure):
    """A benchmark's main(): measure() with SIGTERM unwinding like Ctrl-C
    (so every running() block stops its program), exit status 130 when
    interrupted, and a refusal (e.g. isolation.isolated() while another
    run isolates) as a message, not a traceback."""
    with interruptible():
        try:
            return measure()
        except KeyboardInterrupt:
            sys.exit(130)
        except UsageError as e:
            sys.exit(f"{os.path.basename(sys.argv[0])}: {e}")


def wait_ready(p):
    """Reads a linkemud's output (stdout=PIPE, text) until its `ready`
    line; when it ends before that, the benchmark stops with its output."""
    for line in p.stdout:
        if line.startswith("linkemud: ready"):
            return
    sys.exit("linkemud did not start:\n" + (p.stdout.read() if p.stdout else ""))
