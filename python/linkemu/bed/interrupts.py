"""Signal handling for commands that must clean up whatever happens.

SIGTERM and SIGHUP are turned into KeyboardInterrupt so that one
try/finally handles Ctrl-C, `kill` and a closed terminal alike; cleanup
itself runs with those signals ignored, so a second Ctrl-C cannot cut it
short and leave a namespace or a daemon behind.
"""

from __future__ import annotations

import contextlib
import signal
import threading

_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt(signal.Signals(signum).name)


def _in_main_thread() -> bool:
    # Python runs signal handlers in the main thread only, and
    # signal.signal() refuses the others.
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def interruptible():
    """Within: SIGTERM/SIGHUP behave like Ctrl-C (KeyboardInterrupt).
    Off the main thread, which no signal reaches, it changes nothing."""
    if not _in_main_thread():
        yield
        return
    old = {s: signal.getsignal(s) for s in _SIGNALS}
    signal.signal(signal.SIGTERM, _raise_interrupt)
    signal.signal(signal.SIGHUP, _raise_interrupt)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


@contextlib.contextmanager
def shielded():
    """Within: Ctrl-C, SIGTERM and SIGHUP are ignored (for cleanup).

    Off the main thread there is nothing to shield (Python runs signal
    handlers in the main thread only, and signal.signal() refuses other
    threads): cleanup there, e.g. daemon.start() called from an API
    user's thread, just runs."""
    if not _in_main_thread():
        yield
        return
    old = {s: signal.getsignal(s) for s in _SIGNALS}
    for s in _SIGNALS:
        signal.signal(s, signal.SIG_IGN)
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
