"""A network namespace named the way a user names it: an `ip netns` name,
a process id (a container's, a Mininet host's), or the host's own.

Namespaces linkemu builds itself are always `ip netns` names; the ones a
user brings (`testbed up --between NS_A NS_B`) may be either, and the root
namespace is where `linkemu shell` puts the host's end of the link. One
object answers, for any of them, how to run a command inside and how to
point `ip link add ... netns` at it, so the bed code never branches on
what kind of namespace it is touching.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from linkemu.errors import LinkemuError, UsageError

NETNS_DIR = Path("/run/netns")
_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


@dataclass(frozen=True)
class NsRef:
    """kind: 'name' (an `ip netns` name), 'pid' (the network namespace of
    a process) or 'root' (the host's, i.e. linkemu's own)."""

    kind: str
    value: str = ""

    # --- naming ------------------------------------------------------------------

    @classmethod
    def parse(cls, text: str) -> "NsRef":
        """NAME, PID, or pid:PID (for a namespace whose name is all digits,
        write it name:NNN)."""
        t = text.strip()
        if t.startswith("pid:"):
            return cls._pid(t[4:], text)
        if t.startswith("name:"):
            return cls._name(t[5:], text)
        if t.isdigit():
            return cls._pid(t, text)
        return cls._name(t, text)

    @classmethod
    def _pid(cls, digits: str, text: str) -> "NsRef":
        if not digits.isdigit() or int(digits) <= 0:
            raise UsageError(f"'{text}' is not a process id")
        return cls("pid", str(int(digits)))

    @classmethod
    def _name(cls, name: str, text: str) -> "NsRef":
        if not _NAME_RE.match(name) or name in (".", ".."):
            raise UsageError(f"'{text}' is not a namespace name (letters, digits, _ . -) "
                             f"or a process id")
        return cls("name", name)

    @classmethod
    def root(cls) -> "NsRef":
        return cls("root")

    def __str__(self) -> str:
        if self.kind == "root":
            return "the host"
        return f"pid {self.value}" if self.kind == "pid" else self.value

    def spec(self) -> str:
        """Round-trips through parse() (for state files)."""
        return {"root": "root", "pid": f"pid:{self.value}", "name": f"name:{self.value}"}[self.kind]

    @classmethod
    def from_spec(cls, spec: str) -> "NsRef":
        return cls.root() if spec == "root" else cls.parse(spec)

    # --- where it is ---------------------------------------------------------------

    @property
    def path(self) -> Path:
        if self.kind == "name":
            return NETNS_DIR / self.value
        if self.kind == "pid":
            return Path(f"/proc/{self.value}/ns/net")
        return Path("/proc/self/ns/net")

    def exists(self) -> bool:
        try:
            return self.path.exists()
        except OSError:
            return False

    def identity(self) -> tuple[int, int] | None:
        """(device, inode) of the namespace: the same for every way of
        naming one namespace, and changed if the name now means another."""
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_dev, st.st_ino)

    def require(self) -> None:
        if self.exists():
            return
        if self.kind == "pid":
            raise LinkemuError(f"no process {self.value} (its network namespace is what "
                               f"--between would use)")
        raise LinkemuError(f"no network namespace '{self.value}' (ip netns list shows "
                           f"those that exist; a container's: give its pid, e.g. "
                           f"docker inspect -f '{{{{.State.Pid}}}}' NAME)")

    # --- commands inside ---------------------------------------------------------------

    def exec_argv(self, cmd: Sequence[str]) -> list[str]:
        """argv that runs cmd with this namespace's network (and, for a
        named one, its /sys, as `ip netns exec` remounts it)."""
        if self.kind == "root":
            return list(cmd)
        if self.kind == "name":
            return ["ip", "netns", "exec", self.value, *cmd]
        # A process's namespace: enter only its network, keep our mounts,
        # so the host's tools run there (a container may have none).
        return ["nsenter", f"--net={self.path}", "--", *cmd]

    def sysfs_argv(self, shell_cmd: str) -> list[str]:
        """argv that runs `sh -c shell_cmd` with a /sys that shows this
        namespace's devices (nsenter --net alone keeps the host's /sys)."""
        if self.kind == "pid":
            return ["nsenter", f"--net={self.path}", "--", "unshare", "--mount", "sh", "-c",
                    f"mount -t sysfs sysfs /sys && {shell_cmd}"]
        return self.exec_argv(["sh", "-c", shell_cmd])

    def ip_argv(self) -> list[str]:
        """`ip` acting on this namespace."""
        if self.kind == "root":
            return ["ip"]
        if self.kind == "name":
            return ["ip", "-n", self.value]
        return ["nsenter", f"--net={self.path}", "--", "ip"]

    def link_target(self) -> str:
        """What `ip link add ... netns X` / `ip link set ... netns X` take."""
        if self.kind == "root":
            raise LinkemuError("the host's namespace is where `ip link add` runs: no netns")
        return self.value
