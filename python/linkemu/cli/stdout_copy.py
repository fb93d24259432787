"""Copy a finished file to standard output (`linkemu capture -w -`)."""

from __future__ import annotations

import os
import signal
import sys

from linkemu.bed.interrupts import interruptible
from linkemu.errors import LinkemuError

CHUNK = 1 << 20


def copy_file_to_stdout(path: str | os.PathLike) -> None:
    """Write the file's bytes to file descriptor 1, all of them.

    main() lets SIGPIPE end linkemu quietly (`linkemu ... | head`), but here
    that would skip the caller's cleanup (the temporary directory the file
    is in): SIGPIPE is ignored while we write, and a reader that has gone
    is a clear error instead. SIGTERM and SIGHUP become KeyboardInterrupt,
    as Ctrl-C, so the cleanup runs for them too."""
    sys.stdout.flush()          # nothing of ours may follow or cut into the stream
    old = signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    try:
        with interruptible(), open(path, "rb") as f:
            while chunk := f.read(CHUNK):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(1, view):]
    except BrokenPipeError as e:
        raise LinkemuError("-w -: standard output was closed (its reader exited) before "
                           "the whole capture was written") from e
    except OSError as e:
        raise LinkemuError(f"-w -: writing the capture to standard output failed: "
                           f"{e.strerror or e}") from e
    finally:
        signal.signal(signal.SIGPIPE, old)
