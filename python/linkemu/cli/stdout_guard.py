"""Standard output whose failed writes are one clear error, not a traceback
(`linkemu profile list > /dev/full`, a full disk, a terminal that went away).

A closed pipe (`| head`) never gets here: main() leaves SIGPIPE at its
default action, which ends linkemu quietly, as other commands.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Iterator

from linkemu.errors import LinkemuError


class _GuardedStdout:
    """sys.stdout, but an OSError from write() or flush() becomes a
    LinkemuError naming standard output. Everything else is the wrapped
    stream's (isatty, fileno, buffer, encoding ...)."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as e:
            raise _failed(e) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as e:
            raise _failed(e) from None

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _failed(e: OSError) -> LinkemuError:
    # What the stream still holds would fail again when Python flushes it at
    # exit, printing "Exception ignored ..." and exiting 120: point file
    # descriptor 1 at /dev/null so that last flush succeeds and our message
    # stays the only one.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    except OSError:
        pass
    return LinkemuError(f"cannot write to standard output: {e.strerror or e}")


@contextlib.contextmanager
def guarded_stdout() -> Iterator[None]:
    """sys.stdout guarded while the block runs, and flushed at its end so a
    late failure is raised inside it (not at exit); restored after."""
    original = sys.stdout
    sys.stdout = _GuardedStdout(original)
    try:
        yield
        sys.stdout.flush()
    finally:
        sys.stdout = original
