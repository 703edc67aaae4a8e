"""Run untrusted programs (code written by the models under test) with hard limits.

`run_sandboxed(argv, ...)` starts the program in a fresh working directory (removed
afterwards) and returns how it ended. What holds, whatever the program does:

- Its own process group (a new session); when the program exits, or when the wall-clock
  timeout passes, the whole group is killed, so children it left behind die with it
  (under bubblewrap its pid namespace ends with it too).
- Resource limits set before exec: CPU seconds (SIGXCPU, then SIGKILL a second later),
  address space (allocations fail: Python raises MemoryError), number of processes of
  its account (fork fails), size of any file it writes (SIGXFSZ; Python, which ignores
  that signal, gets OSError EFBIG), open files, no core dumps.
- When Assay runs as root, the program runs as the unprivileged `nobody` account: root
  ignores the process limit and may raise every other limit. The process limit counts
  every process of that account, so it is set to the account's current count plus
  `max_processes` (sandboxes running at the same time share that margin).
- An empty environment apart from a minimal PATH, HOME, TMPDIR and PWD (the working
  directory) and a UTF-8 locale: no ASSAY_* settings, API keys or other secrets.
- Confined by the operating system (see `isolation()`), never by code the program could
  touch: with bubblewrap, in namespaces of its own (user, mount, pid, ipc, uts, and
  network where the host allows) whose filesystem holds only /usr, the interpreter's
  own tree (read-only), a minimal /dev and the working directory: no /etc, no /proc, no
  instance folder; without it, Landlock grants the same trees. Either way a seccomp
  filter (seccomp.py) refuses every socket and the calls that reach other processes or
  the kernel's internals, so the network is closed even where no network namespace can
  be made. With neither bubblewrap nor Landlock, or no filter for this machine, nothing
  runs: SandboxError says why.
- Under bubblewrap the working folder is a tmpfs of `Limits.disk_mb` bytes and
  `Limits.max_files` files (workfolder.py), and /tmp one of `disk_mb` bytes: writing past
  them fails with ENOSPC, and nothing the program writes lands on the host's disk but the
  collected files (each a bound host file, bounded by the file size limit). Under
  Landlock alone the folder is on the host's disk, bounded per file only.
- stdout and stderr are read as they come and kept up to `Limits.output_bytes` each
  (the rest is read and dropped, marked truncated), so a chatty program neither blocks
  nor fills memory.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import resource
import selectors
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache

from assay.scorers import landlock, seccomp, workfolder

MIB = 1024 * 1024
SAFE_PATH = "/usr/bin:/bin"
SYSTEM_TREES = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom")
BWRAP, LANDLOCK = "bubblewrap", "landlock"
# bubblewrap's own processes (its monitor and the namespace's init) count as the account's.
BWRAP_PROCESSES = 2
DRAIN_S = 1.0  # how long to read what is left in the pipes once the group is killed


class SandboxError(RuntimeError):
    """The sandbox could not run the program at all (not a failure of the program)."""


@dataclass(frozen=True)
class Limits:
    wall_s: float = 5.0  # wall-clock timeout; the process group is killed after it
    cpu_s: int = 5  # CPU seconds of the program (all its threads)
    memory_mb: int = 256  # address space
    max_processes: int = 16  # processes the program may have, itself included
    file_size_mb: int = 16  # largest file it may write
    disk_mb: int = 64  # bytes of its working folder (a tmpfs, under bubblewrap), and of /tmp
    max_files: int = 2000  # files and folders its working folder may hold
    open_files: int = 64
    output_bytes: int = 64 * 1024  # kept of stdout and of stderr each
    collect_bytes: int = MIB  # kept of each collected file

    def __post_init__(self) -> None:
        for name in ("wall_s", "cpu_s", "memory_mb", "max_processes", "file_size_mb",
                     "disk_mb", "max_files", "open_files", "output_bytes", "collect_bytes"):
            if getattr(self, name) <= 0:
                raise ValueError(f"Limits.{name} must be positive")


@dataclass(frozen=True)
class SandboxResult:
    returncode: int  # negative: killed by that signal (as in subprocess)
    stdout: str
    stderr: str
    stdout_truncated: bool
    stderr_truncated: bool
    timed_out: bool  # killed at the wall-clock timeout
    killed_by_limit: str | None  # "cpu" or "file_size" when a limit's signal ended it
    duration_s: float
    network_namespace: bool  # ran in a network namespace of its own
    files: dict[str, str] = field(default_factory=dict)  # collected files that existed

    @property
    def signal_name(self) -> str | None:
        if self.returncode >= 0:
            return None
        try:
            return signal.Signals(-self.returncode).name
        except ValueError:
            return f"signal {-self.returncode}"


def run_sandboxed(argv: Sequence[str], *, files: Mapping[str, str | bytes] | None = None,
                  stdin: str | bytes = b"", limits: Limits | None = None,
                  collect: Sequence[str] = ()) -> SandboxResult:
    """Run `argv` (argv[0] an absolute path, or found on /usr/bin:/bin) in a fresh working
    directory holding `files`, feeding it `stdin`; return how it ended, with the text of
    the `collect`ed files it left in its working directory. Raises SandboxError when the
    program cannot be started or the operating system offers no isolation."""
    program = argv[0] if "/" in argv[0] else shutil.which(argv[0], path=SAFE_PATH)
    if not program or not os.path.isfile(program):
        raise SandboxError(f"Cannot start {argv[0]!r}: no such program")
    return _run([program, *argv[1:]], files=files or {}, stdin=stdin,
                limits=limits or Limits(), collect=collect, isolation=isolation())


def isolation() -> str:
    """How programs are confined here: BWRAP where bubblewrap can make its namespaces,
    else LANDLOCK where the kernel has it; SandboxError when neither, or when there is no
    seccomp filter for this machine (nothing runs unconfined)."""
    if seccomp.program() is None:
        raise SandboxError("Code execution is unavailable: no seccomp filter for this "
                           "machine's architecture, so the network cannot be closed.")
    if bubblewrap_available():
        return BWRAP
    if landlock.abi() >= 1:
        return LANDLOCK
    raise SandboxError("Code execution is unavailable: install bubblewrap (Debian package "
                       "`bubblewrap`) or run on a kernel with Landlock enabled; Assay does "
                       "not run code without operating-system isolation.")


@cache
def bubblewrap_available() -> bool:
    """Whether bubblewrap is installed and may create its namespaces for the account."""
    return _bwrap_probe(network=False)


@cache
def network_namespace_available() -> bool:
    """Whether bubblewrap may also give the program a network namespace of its own (the
    seccomp filter closes the network either way)."""
    return bubblewrap_available() and _bwrap_probe(network=True)


def _bwrap_probe(network: bool) -> bool:
    if not _bwrap():
        return False
    try:
        probe = _run(["/bin/true"], files={}, stdin=b"", limits=Limits(wall_s=10),
                     collect=(), isolation=BWRAP, network=network)
    except SandboxError:
        return False
    return probe.returncode == 0


def sandbox_python() -> str:
    """A Python (3.8 or later, for audit hooks) that the sandbox account can run: Assay's
    own interpreter, or the system's when Assay's lives where `nobody` cannot reach."""
    return _sandbox_python(isolation())


@cache
def _sandbox_python(_isolation: str) -> str:
    candidates = [sys.executable, os.path.realpath(sys.executable),
                  getattr(sys, "_base_executable", ""),
                  shutil.which("python3", path="/usr/local/bin:" + SAFE_PATH) or ""]
    check = "import sys; sys.exit(sys.version_info < (3, 8))"
    for candidate in dict.fromkeys(c for c in candidates if c):
        try:
            probe = run_sandboxed([candidate, "-I", "-S", "-c", check],
                                  limits=Limits(wall_s=10))
        except SandboxError:
            continue
        if probe.returncode == 0:
            return candidate
    raise SandboxError("No Python interpreter the sandbox account can run was found "
                       f"(tried {', '.join(dict.fromkeys(c for c in candidates if c))})")


@cache
def _bwrap() -> str:
    return shutil.which("bwrap", path=SAFE_PATH) or ""


def _account() -> tuple[int, int] | None:
    """The (uid, gid) to drop to, when Assay runs as root."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam("nobody")
    except KeyError:
        return 65534, 65534
    return entry.pw_uid, entry.pw_gid


def _run(argv: Sequence[str], *, files: Mapping[str, str | bytes], stdin: str | bytes,
         limits: Limits, collect: Sequence[str], isolation: str,
         network: bool | None = None) -> SandboxResult:
    """Run `argv` under `isolation`; `network`: whether to ask bubblewrap for a network
    namespace (None: where the host allows one)."""
    account = _account()
    filter_program = seccomp.program()
    if filter_program is None:
        raise SandboxError("no seccomp filter for this machine")
    outer = tempfile.mkdtemp(prefix="assay-sandbox-")
    filter_fd = -1
    try:
        # The program owns `work` but not `outer`, so it cannot swap `work` for a link.
        os.chmod(outer, 0o711)
        work = os.path.join(outer, "work")
        os.mkdir(work, 0o700)
        trees = _program_trees(argv[0])
        extra = BWRAP_PROCESSES if isolation == BWRAP else 0
        rlimits = _rlimits(limits, account[0] if account else os.getuid(), extra)
        collected_at = {name: os.path.join(work, name) for name in collect}
        if isolation == BWRAP:
            if network is None:
                network = network_namespace_available()
            _check_names(files)
            collected_at = _collect_files(outer, collect, files, account)
            filter_fd = seccomp.memfd(filter_program)
            argv = [*_bwrap_argv(work, trees, filter_fd, network, limits.disk_mb * MIB),
                    *argv]
            confine = _bounded_folder(work, limits, files, collected_at, rlimits)
        else:
            _write_files(work, files, account)
            network = False
            confine = _confiner(rlimits, work, trees, filter_program)
        with tempfile.TemporaryFile() as stdin_file:
            stdin_file.write(stdin.encode() if isinstance(stdin, str) else stdin)
            stdin_file.seek(0)
            started = time.monotonic()
            try:
                proc = subprocess.Popen(
                    list(argv), stdin=stdin_file, stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE, cwd=work, env=_environment(work),
                    start_new_session=True, preexec_fn=confine,
                    pass_fds=(filter_fd,) if filter_fd >= 0 else (),
                    user=account[0] if account else None,
                    group=account[1] if account else None,
                    extra_groups=[] if account else None)
            except (OSError, subprocess.SubprocessError) as exc:
                raise SandboxError(f"Cannot start {argv[0]!r}: {exc}") from exc
        out, err = _Capped(limits.output_bytes), _Capped(limits.output_bytes)
        timed_out, duration = _supervise(proc, out, err, started, limits.wall_s)
        returncode = proc.returncode
        if isolation == BWRAP:
            returncode = _bwrap_status(returncode)
        # a collected file is bound in before the program starts, so an empty one that
        # was not an input reads as not left (either way, under both layers)
        collected = {name: text for name, path in collected_at.items()
                     if (text := _read_collected(path, limits.collect_bytes)) is not None
                     and (text or name in files)}
    finally:
        if filter_fd >= 0:
            os.close(filter_fd)
        _remove_tree(outer)
    return SandboxResult(
        returncode=returncode, stdout=out.text(), stderr=err.text(),
        stdout_truncated=out.truncated, stderr_truncated=err.truncated, timed_out=timed_out,
        killed_by_limit=None if timed_out else _limit_signal(returncode),
        duration_s=duration, network_namespace=network, files=collected)


def _program_trees(program: str) -> tuple[str, ...]:
    """The read-only trees the program needs: the system's, and the bin and lib folders
    of the installation it comes from when that lies elsewhere (a Python in /opt)."""
    real = os.path.realpath(program)
    if real.startswith(tuple(tree + "/" for tree in SYSTEM_TREES)):
        return SYSTEM_TREES
    prefix = os.path.dirname(os.path.dirname(real))
    return (*SYSTEM_TREES, *(os.path.join(prefix, name) for name in ("bin", "lib")))


def _bwrap_argv(work: str, trees: Sequence[str], filter_fd: int, network: bool,
                tmp_bytes: int) -> list[str]:
    """bubblewrap's command line: new namespaces, a root holding only `trees` (read-only,
    system folders that are links on the host stay links), /dev and the working folder."""
    argv = [_bwrap(), "--unshare-user", "--unshare-ipc", "--unshare-pid", "--unshare-uts",
            "--unshare-cgroup-try", "--die-with-parent", "--cap-drop", "ALL",
            "--hostname", "sandbox"]
    if network:
        argv.append("--unshare-net")
    for tree in trees:
        if os.path.islink(tree) and tree in SYSTEM_TREES:
            argv += ["--symlink", os.readlink(tree), tree]
        elif os.path.isdir(tree):
            argv += ["--ro-bind", tree, tree]
    argv += ["--dev", "/dev", "--size", str(tmp_bytes), "--tmpfs", "/tmp",
             "--bind", work, work, "--chdir", work,
             "--seccomp", str(filter_fd), "--"]
    return argv


def _bwrap_status(returncode: int) -> int:
    """bubblewrap exits with 128 + N when the program died of signal N: report it as a
    signal, like subprocess does (a program exiting with such a status itself reads the
    same; it gains nothing by it)."""
    if 128 < returncode < 128 + signal.NSIG:
        return -(returncode - 128)
    return returncode


def _confiner(rlimits: list[tuple[int, int, int]], work: str, trees: Sequence[str],
              filter_program: bytes) -> Callable[[], None]:
    """Without bubblewrap: limits, then Landlock, then the seccomp filter, in the child
    between fork and exec (the kernel keeps all three across exec)."""
    set_limits = _limit_setter(rlimits)
    landlock.abi()  # both load the C library here, not in the child
    seccomp.prepare()

    def apply() -> None:
        set_limits()
        landlock.restrict(read=DEVICES, write=(work, "/dev/null"), execute=trees)
        seccomp.install(filter_program)
    return apply


def _bounded_folder(work: str, limits: Limits, files: Mapping[str, str | bytes],
                    collected_at: Mapping[str, str],
                    rlimits: list[tuple[int, int, int]]) -> Callable[[], None]:
    """Under bubblewrap: the working folder a tmpfs of `disk_mb` and `max_files`
    (workfolder.py), filled, then the limits, in the child between fork and exec."""
    set_limits = _limit_setter(rlimits)
    # A user namespace keeps the process limit its creator had: set that one first, so the
    # count stays the account's over the host (the others after, as the folder is filled).
    set_processes = _limit_setter([r for r in rlimits if r[0] == resource.RLIMIT_NPROC])
    workfolder.prepare()
    inputs = {name: content for name, content in files.items() if name not in collected_at}

    def apply() -> None:
        set_processes()
        workfolder.enter(work, limits.disk_mb * MIB, limits.max_files, inputs, collected_at)
        set_limits()
    return apply


def _collect_files(outer: str, collect: Sequence[str], files: Mapping[str, str | bytes],
                   account: tuple[int, int] | None) -> dict[str, str]:
    """The host files the collected names are bound to (holding the input of that name,
    if any), in a folder of their own the program cannot reach."""
    _check_names(dict.fromkeys(collect, b""))
    folder = os.path.join(outer, "collect")
    os.mkdir(folder)
    os.chmod(folder, 0o711)  # the sandbox account binds its files; bubblewrap hides them
    paths = {}
    for index, name in enumerate(collect):
        paths[name] = path = os.path.join(folder, str(index))
        with open(path, "wb") as handle:
            content = files.get(name, b"")
            handle.write(content.encode() if isinstance(content, str) else content)
        if account:
            os.chown(path, *account)
    return paths


def _check_names(files: Mapping[str, object]) -> None:
    for name in files:
        if not name or os.sep in name or name in (".", ".."):
            raise ValueError(f"Sandbox file names are plain names, not {name!r}")


def _write_files(work: str, files: Mapping[str, str | bytes],
                 account: tuple[int, int] | None) -> None:
    _check_names(files)
    for name, content in files.items():
        path = os.path.join(work, name)
        with open(path, "wb") as handle:
            handle.write(content.encode() if isinstance(content, str) else content)
    if account:
        for path in [work, *(os.path.join(work, name) for name in files)]:
            os.chown(path, *account)


def _environment(work: str) -> dict[str, str]:
    """Built from nothing: the parent's variables (settings, keys) never reach the child."""
    return {"PATH": SAFE_PATH, "HOME": work, "TMPDIR": work, "PWD": work,  # bwrap sets PWD
            "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}


def _rlimits(limits: Limits, uid: int, extra: int = 0) -> list[tuple[int, int, int]]:
    processes = _processes_of(uid) + limits.max_processes + extra
    memory, file_size = limits.memory_mb * MIB, limits.file_size_mb * MIB
    wanted = [
        (resource.RLIMIT_CPU, limits.cpu_s, limits.cpu_s + 1),
        (resource.RLIMIT_AS, memory, memory),
        (resource.RLIMIT_NPROC, processes, processes),
        (resource.RLIMIT_FSIZE, file_size, file_size),
        (resource.RLIMIT_NOFILE, limits.open_files, limits.open_files),
        (resource.RLIMIT_CORE, 0, 0),
    ]
    # Only ever lower a limit: an unprivileged parent cannot raise its hard limits.
    clamped = []
    for which, soft, hard in wanted:
        current = resource.getrlimit(which)[1]
        if current != resource.RLIM_INFINITY:
            soft, hard = min(soft, current), min(hard, current)
        clamped.append((which, soft, hard))
    return clamped


def _processes_of(uid: int) -> int:
    count = 0
    with os.scandir("/proc") as entries:
        for entry in entries:
            if entry.name.isdigit():
                with contextlib.suppress(FileNotFoundError):  # exited while we looked
                    count += entry.stat().st_uid == uid
    return count


def _limit_setter(rlimits: list[tuple[int, int, int]]) -> Callable[[], None]:
    def apply() -> None:  # runs in the child between fork and exec
        for which, soft, hard in rlimits:
            resource.setrlimit(which, (soft, hard))
    return apply


class _Capped:
    def __init__(self, limit: int):
        self.data = bytearray()
        self.limit = limit
        self.truncated = False

    def add(self, chunk: bytes) -> None:
        room = self.limit - len(self.data)
        if len(chunk) > room:
            self.truncated = True
        self.data += chunk[:max(room, 0)]

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


def _supervise(proc: subprocess.Popen[bytes], out: _Capped, err: _Capped, started: float,
               wall_s: float) -> tuple[bool, float]:
    """Read the program's output until it exits or the deadline passes, then kill its
    whole group and read what is left. Returns (timed out, duration)."""
    assert proc.stdout is not None and proc.stderr is not None
    pidfd = os.pidfd_open(proc.pid)  # readable once the program has exited
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(pidfd, selectors.EVENT_READ, None)
            selector.register(proc.stdout, selectors.EVENT_READ, out)
            selector.register(proc.stderr, selectors.EVENT_READ, err)
            # Children left behind may hold the pipes open: stop at the program's own exit.
            exited = _read_until_exit(selector, started + wall_s)
            finished = time.monotonic()
            # Not reaped yet, so its pid (the group id) cannot have been reused.
            _kill_group(proc.pid)
            selector.unregister(pidfd)
            _drain(selector, time.monotonic() + DRAIN_S)
    finally:
        os.close(pidfd)
    proc.wait()
    proc.stdout.close()
    proc.stderr.close()
    return not exited, finished - started


def _read_until_exit(selector: selectors.BaseSelector, deadline: float) -> bool:
    """Keep reading output; True once the program exits, False at the deadline."""
    exited = False
    while not exited:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        for key, _ in selector.select(remaining):
            if key.data is None:
                exited = True
            else:
                _read_into(selector, key)
    return True


def _drain(selector: selectors.BaseSelector, deadline: float) -> None:
    while selector.get_map() and (remaining := deadline - time.monotonic()) > 0:
        for key, _ in selector.select(remaining):
            _read_into(selector, key)


def _read_into(selector: selectors.BaseSelector, key: selectors.SelectorKey) -> None:
    chunk = os.read(key.fd, 65536)
    if chunk:
        key.data.add(chunk)
    else:
        selector.unregister(key.fileobj)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


def _limit_signal(returncode: int) -> str | None:
    if returncode == -signal.SIGXCPU:
        return "cpu"
    if returncode == -signal.SIGXFSZ:
        return "file_size"
    if returncode == -signal.SIGKILL:
        # Not the timeout (checked before): the kernel's kill at the hard CPU limit.
        return "cpu"
    return None


def _read_collected(path: str, limit: int) -> str | None:
    """The text of a file the program left, refusing links and anything but a regular
    file (the program controls its directory; Assay may run as root)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return handle.read(limit).decode("utf-8", errors="replace")


def _remove_tree(path: str) -> None:
    shutil.rmtree(path, onerror=_force_remove)


def _force_remove(function: Callable[..., object], path: str, _exc: object) -> None:
    """The program may have left directories without permissions (which stop Assay only
    when it does not run as root): give them back and remove again."""
    if not os.path.lexists(path):
        return
    os.chmod(os.path.dirname(path), stat.S_IRWXU)
    if os.path.isdir(path) and not os.path.islink(path):
        os.chmod(path, stat.S_IRWXU)
        shutil.rmtree(path, onerror=_force_remove)
    else:
        os.unlink(path)
