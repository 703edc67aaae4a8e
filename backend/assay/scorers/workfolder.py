"""A sandbox's working folder of bounded size and file count, off the host's disk.

bubblewrap's ``--size`` bounds a tmpfs's bytes but not its inodes, so the folder is
mounted before bubblewrap starts: the child (between fork and exec) enters a user and
mount namespace of its own, mounts a tmpfs with ``size=`` and ``nr_inodes=`` over the
working folder, writes the program's files into it and binds each file to be collected
from a host file made beforehand (the host cannot see into the tmpfs; a bound file is a
mount point, so it cannot be removed or replaced, and the file size limit bounds it).
Then it execs bubblewrap, which binds that folder into its own namespaces. Writing past
the bounds fails with ENOSPC; the host disk holds only the collected files.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Mapping

CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
PR_SET_DUMPABLE = 4
MS_NOSUID, MS_NODEV, MS_BIND, MS_REC, MS_PRIVATE = 2, 4, 4096, 16384, 1 << 18

_loaded: dict[str, ctypes.CDLL] = {}


def prepare() -> None:
    """Load the C library in the parent (not between fork and exec)."""
    if "libc" not in _loaded:
        _loaded["libc"] = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"sandbox work folder: {what}: {os.strerror(errno)}")


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def enter(work: str, size_bytes: int, inodes: int, files: Mapping[str, str | bytes],
          collected: Mapping[str, str]) -> None:
    """In the child: mount the bounded folder over `work` and fill it. `collected`: name
    in the folder -> the host file it is bound to."""
    libc = _loaded["libc"]
    uid, gid = os.getuid(), os.getgid()
    # A process that changed its uid (root -> nobody) is not dumpable, so its /proc/self
    # files are root's and the maps below could not be written; exec resets this again.
    _check(libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), "dumpable")
    _check(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare")
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")
    _check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "private mounts")
    options = f"size={size_bytes},nr_inodes={inodes},mode=0700".encode()
    _check(libc.mount(b"tmpfs", work.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options),
           "tmpfs")
    for name, content in files.items():
        with open(os.path.join(work, name), "wb") as handle:
            handle.write(content.encode() if isinstance(content, str) else content)
    for name, host in collected.items():
        target = os.path.join(work, name)
        if not os.path.lexists(target):
            open(target, "wb").close()
        _check(libc.mount(host.encode(), target.encode(), None, MS_BIND, None),
               f"bind {name}")
