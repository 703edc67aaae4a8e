"""Landlock (Linux 5.13+) through ctypes: confine the calling process and what it starts.

Standalone on purpose (standard library only, Python 3.8+): Assay calls `restrict` in the sandbox's
child before exec where bubblewrap is missing, and the code harness, which gets a copy
of this file, calls it on itself before it runs the code under test (no exec at all from
then on). Once applied, the kernel holds it: nothing the process does can lift it.

- Files: only the given trees may be read (and executed where asked); only the given
  trees may be written. Everything else, /proc included, is refused (EACCES).
- Network (ABI 4+): binding and connecting TCP sockets are refused.
- Scopes (ABI 6+): no abstract unix sockets and no signals outside the sandbox.
"""

from __future__ import annotations

import ctypes
import os
import struct
from collections.abc import Iterable

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # the same on every arch
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_MAKE = sum(1 << bit for bit in range(4, 13))  # remove, make char/dir/reg/sock/fifo/...
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_FILE_ONLY = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
_NET_TCP = (1 << 0) | (1 << 1)  # bind, connect
_SCOPES = (1 << 0) | (1 << 1)  # abstract unix sockets, signals


_loaded: dict[str, ctypes.CDLL] = {}


def _libc() -> ctypes.CDLL:
    """The C library, loaded once and before any fork: the child between fork and exec
    then only calls into it (functools.cache would need Python 3.9)."""
    if "libc" not in _loaded:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        _loaded["libc"] = libc
    return _loaded["libc"]


def abi() -> int:
    """The kernel's Landlock ABI version, 0 when Landlock is missing or disabled."""
    version = _libc().syscall(_CREATE_RULESET, None, 0, _CREATE_RULESET_VERSION)
    return max(version, 0)


def _handled(version: int) -> int:
    access = EXECUTE | WRITE_FILE | READ_FILE | READ_DIR | _MAKE
    if version >= 2:
        access |= REFER
    if version >= 3:
        access |= TRUNCATE
    if version >= 5:
        access |= IOCTL_DEV
    return access


def restrict(read: Iterable[str], write: Iterable[str], execute: Iterable[str] = ()) -> int:
    """Confine this process: `read` trees readable, `write` trees fully writable (not
    executable), `execute` trees readable and executable; paths that do not exist are
    skipped. Returns the ABI applied; raises OSError when Landlock is unavailable."""
    libc = _libc()
    version = abi()
    if version < 1:
        raise OSError("Landlock is not available in this kernel")
    handled = _handled(version)
    # struct landlock_ruleset_attr grew a field at ABI 4 (net) and at ABI 6 (scoped).
    attr = struct.pack("=Q", handled)
    if version >= 4:
        attr += struct.pack("=Q", _NET_TCP)
    if version >= 6:
        attr += struct.pack("=Q", _SCOPES)
    ruleset = libc.syscall(_CREATE_RULESET, attr, len(attr), 0)
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        reading = READ_FILE | READ_DIR
        for paths, access in ((read, reading), (execute, reading | EXECUTE),
                              (write, handled & ~EXECUTE)):
            for path in paths:
                _allow(libc, ruleset, path, access & handled)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if libc.syscall(_RESTRICT_SELF, ruleset, 0) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)
    return version


def _allow(libc: ctypes.CDLL, ruleset: int, path: str, access: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # absent here: nothing to allow
    try:
        if not os.path.isdir(path):
            access &= _FILE_ONLY  # directory rights on a file are EINVAL
        # struct landlock_path_beneath_attr is packed: u64 allowed_access, s32 parent_fd.
        rule = struct.pack("=Qi", access, fd)
        if libc.syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, rule, 0) != 0:
            raise OSError(ctypes.get_errno(), f"landlock_add_rule({path}) failed")
    finally:
        os.close(fd)
