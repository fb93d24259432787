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


@contextlib.contextmanager
def deferred():
    """Within: Ctrl-C, SIGTERM and SIGHUP wait until the block has ended,
    then act as they would have (for work that must not stop half-way, and
    must not be lost either: a change sent to a daemon and the log line
    that records it). Unlike shielded(), no signal is dropped: the first
    one that came is raised again on leaving, after the handlers are back.

    The handlers are Python's, which run in the main thread whichever
    thread the signal reached; off the main thread it changes nothing."""
    if not _in_main_thread():
        yield
        return
    held: list[int] = []

    def hold(signum, frame):
        held.append(signum)

    # A shielded (ignored) signal stays ignored; None: a handler not set
    # from Python, which signal.signal() could not put back.
    old = {s: h for s in _SIGNALS
           if (h := signal.getsignal(s)) is not signal.SIG_IGN and h is not None}
    for s in old:
        signal.signal(s, hold)
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        if held:
            signal.raise_signal(held[0])
