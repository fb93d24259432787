"""Files written whole or not at all: the bytes go into a new file beside
the target, which is then renamed over it.

The new file has a name of its own, made with O_EXCL (mkstemp): a fixed
'PATH.tmp' opened with O_CREAT follows a symlink planted there, and
linkemu runs as root, often into a shared directory such as /tmp; two runs
given the same output would also meet in it. Beside the target, so that
the rename stays on one filesystem.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import BinaryIO, Iterator


def new_beside(path: str | os.PathLike, mode: int | None = None) -> tuple[BinaryIO, Path]:
    """A new, empty file in path's directory, open for writing bytes, and
    its path. mode: its permission bits (None: as open() would make a new
    file under the umask, not mkstemp's 0600)."""
    path = Path(path)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, _umasked(0o666) if mode is None else mode)
        return os.fdopen(fd, "wb"), Path(name)
    except BaseException:
        os.close(fd)
        Path(name).unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def replacing(path: str | os.PathLike, mode: int | None = None,
              fsync: bool = False) -> Iterator[BinaryIO]:
    """Within: a new file to write; at the end it replaces `path` (with
    fsync, its bytes are on disk before the name points at them). On any
    exception it is removed, and `path` is as it was."""
    f, tmp = new_beside(path, mode)
    try:
        with f:
            yield f
            if fsync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def _umasked(mode: int) -> int:
    """mode as the process's umask would make a new file's."""
    mask = os.umask(0)
    os.umask(mask)
    return mode & ~mask
