"""The sandbox's seccomp filter, as a classic BPF program built here (no libseccomp).

It closes the network whatever the host allows: `socket()` fails for every address
family (sockets to TCP/UDP listeners, unix sockets, netlink, raw packets), so it does
not depend on a network namespace that only some hosts let us create. It also refuses
the calls that reach other processes' memory, the kernel's attack surface or the mount
table: ptrace, process_vm_*, io_uring (which opens sockets without `socket()`), bpf,
perf events, userfaultfd, keyrings, namespaces, mounts, modules and file handles; and
setsid/setpgid, so no process can leave the group the timeout kills.
`clone3` answers ENOSYS so the C library falls back to `clone`.

Loaded by bubblewrap (`--seccomp FD`) or, without it, by `install()` in the child before
exec. Unknown architectures have no filter (`program()` returns None), and the sandbox
then refuses to run.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct
from functools import cache

# BPF instruction classes and fields (linux/filter.h, linux/seccomp.h).
_LD_W_ABS = 0x00 | 0x00 | 0x20
_JEQ_K = 0x05 | 0x10 | 0x00
_JGE_K = 0x05 | 0x30 | 0x00
_RET_K = 0x06
_RET_KILL_PROCESS = 0x80000000
_RET_ERRNO = 0x00050000
_RET_ALLOW = 0x7FFF0000
_NR, _ARCH = 0, 4  # offsets in struct seccomp_data

_DENIED = ("socket", "ptrace", "process_vm_readv", "process_vm_writev", "bpf",
           "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key", "mount",
           "umount2", "pivot_root", "unshare", "setns", "kexec_load", "kexec_file_load",
           "init_module", "finit_module", "delete_module", "open_by_handle_at",
           "name_to_handle_at", "io_uring_setup", "io_uring_enter", "io_uring_register",
           "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
           "mount_setattr", "setsid", "setpgid")
_NEWER = {"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
          "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431,
          "fsmount": 432, "fspick": 433, "clone3": 435, "mount_setattr": 442}
# (audit arch, syscall numbers) per machine; the newer calls share numbers everywhere.
_ARCHES = {
    "x86_64": (0xC000003E, {
        "socket": 41, "ptrace": 101, "pivot_root": 155, "mount": 165, "umount2": 166,
        "init_module": 175, "delete_module": 176, "kexec_load": 246, "add_key": 248,
        "request_key": 249, "keyctl": 250, "unshare": 272, "perf_event_open": 298,
        "name_to_handle_at": 303, "open_by_handle_at": 304, "setns": 308,
        "process_vm_readv": 310, "process_vm_writev": 311, "finit_module": 313,
        "kexec_file_load": 320, "bpf": 321, "userfaultfd": 323, "setpgid": 109,
        "setsid": 112, **_NEWER}),
    "aarch64": (0xC00000B7, {
        "umount2": 39, "mount": 40, "pivot_root": 41, "unshare": 97, "kexec_load": 104,
        "init_module": 105, "delete_module": 106, "ptrace": 117, "socket": 198,
        "add_key": 217, "request_key": 218, "keyctl": 219, "perf_event_open": 241,
        "name_to_handle_at": 264, "open_by_handle_at": 265, "setns": 268,
        "process_vm_readv": 270, "process_vm_writev": 271, "finit_module": 273,
        "bpf": 280, "userfaultfd": 282, "kexec_file_load": 294, "setpgid": 154,
        "setsid": 157, **_NEWER}),
}
_X32_BIT = 0x40000000  # x86_64's x32 ABI: other numbers for the same calls

_PR_SET_NO_NEW_PRIVS = 38
_SECCOMP_SET_MODE_FILTER = 1
_SYS_SECCOMP = {"x86_64": 317, "aarch64": 277}


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program(machine: str | None = None) -> bytes | None:
    """The filter for this machine (struct sock_filter[]), None when it is unknown."""
    arch = _ARCHES.get(machine or platform.machine())
    if arch is None:
        return None
    audit_arch, numbers = arch
    deny = _op(_RET_K, _RET_ERRNO | errno.EPERM)
    ops = [_op(_LD_W_ABS, _ARCH), _op(_JEQ_K, audit_arch, jt=1),
           _op(_RET_K, _RET_KILL_PROCESS), _op(_LD_W_ABS, _NR)]
    if audit_arch == 0xC000003E:
        ops += [_op(_JGE_K, _X32_BIT, jf=1), deny]
    ops += [_op(_JEQ_K, numbers["clone3"], jf=1), _op(_RET_K, _RET_ERRNO | errno.ENOSYS)]
    for name in _DENIED:
        ops += [_op(_JEQ_K, numbers[name], jf=1), deny]
    ops.append(_op(_RET_K, _RET_ALLOW))
    return b"".join(ops)


@cache  # loaded once, before any fork (see `prepare`)
def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def prepare() -> None:
    """Load the C library in the parent: the child between fork and exec then only
    calls into it (dlopen after fork in a threaded process can deadlock)."""
    _libc()


def install(filter_program: bytes) -> None:
    """Load the filter into the calling process (and what it execs); sets no_new_privs.
    Meant for the child between fork and exec."""
    libc = _libc()
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    count = len(filter_program) // 8
    buffer = ctypes.create_string_buffer(filter_program, len(filter_program))
    # struct sock_fprog { unsigned short len; struct sock_filter *filter; }
    fprog = struct.pack("=HxxxxxxQ", count, ctypes.addressof(buffer))
    fprog_buffer = ctypes.create_string_buffer(fprog, len(fprog))
    if libc.syscall(_SYS_SECCOMP[platform.machine()], _SECCOMP_SET_MODE_FILTER, 0,
                    fprog_buffer) != 0:
        raise OSError(ctypes.get_errno(), "seccomp(SET_MODE_FILTER) failed")


def memfd(filter_program: bytes) -> int:
    """A file descriptor holding the filter, for `bwrap --seccomp FD` (close it after)."""
    fd = os.memfd_create("assay-seccomp")  # close-on-exec: only pass_fds hands it on
    os.write(fd, filter_program)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
