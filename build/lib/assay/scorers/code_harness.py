"""The program the code scorer runs in the sandbox: `python -I -S -B code_harness.py MODE`.

Standalone on purpose (standard library only, Python 3.8+): it is copied into the
sandbox's working directory next to `solution.py` (the code under test) and
`request.json`, and never imported by Assay. It installs an audit hook, runs the code
and writes what happened to `result.json`:

- MODE "call": run the code as module `solution`, evaluate `request["call"]` in its
  namespace and report the value as JSON (the expected value never enters the sandbox:
  Assay compares outside).
- MODE "program": run the code as `__main__` with the test's stdin; Assay compares
  its stdout.
- MODE "compile": compile the code and run nothing of it (the scorer's must_compile).

The result is {"ok": true[, "value": ...]} or {"stage": "compile"|"run"|"call"|"value",
"error": "..."} ("value": the call returned something JSON cannot represent).

Before the code runs the harness confines itself with Landlock where the kernel has it
(see landlock.py, copied next to it): from then on the kernel refuses reading outside
the working directory and the standard library, writing outside the working directory,
executing anything and TCP, whatever the code does. Then it installs an audit hook that
refuses sockets, new processes, signals, raising limits, native code (ctypes), tracing
and the gc's views of other objects, with clear errors. The hook's state is bound into
its default arguments when it is defined: no module global, builtin or closure cell the
code could rebind is consulted at check time (os.path.realpath's own helpers still
are, which is one reason the hook is not the boundary). Audit hooks are not a security boundary
on their own (PEP 578): the sandbox around the harness (bubblewrap or Landlock, seccomp,
resource limits, an unprivileged account; see sandbox.py) is.
"""

from __future__ import annotations

import builtins
import json
import os
import sys
from types import TracebackType
from typing import Any

SOLUTION = "solution.py"
REQUEST = "request.json"
RESULT = "result.json"
LANDLOCK = "landlock.py"

DEVICES = frozenset({"/dev/null", "/dev/urandom"})
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


def main() -> None:
    mode = sys.argv[1]
    work = os.path.realpath(os.getcwd())
    with open(os.path.join(work, SOLUTION), encoding="utf-8") as handle:
        source = handle.read()
    with open(os.path.join(work, REQUEST), encoding="utf-8") as handle:
        request = json.load(handle)
    # Bound before the code runs, which may replace builtins or module attributes.
    result_path, dumps, open_file = os.path.join(work, RESULT), json.dumps, open
    readable = (work, *(os.path.realpath(p) for p in sys.path if p), "/usr/share/zoneinfo")
    _confine(work, readable)
    _install_guard(work, readable)
    result = _evaluate(mode, source, request)
    sys.stdout.flush()
    try:
        text = dumps(result)
    except (TypeError, ValueError) as exc:
        text = dumps({"stage": "value", "error": _not_json(result.get("value"), exc)})
    with open_file(result_path, "w", encoding="utf-8") as handle:
        handle.write(text)


def _evaluate(mode: str, source: str, request: dict[str, Any]) -> dict[str, Any]:
    try:
        code = compile(source, SOLUTION, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:  # ValueError: null bytes in the source
        return {"stage": "compile", "error": _describe_syntax(exc)}
    if mode == "compile":
        return {"ok": True}
    namespace: dict[str, Any] = {"__name__": "__main__" if mode == "program" else "solution",
                                 "__builtins__": builtins}
    try:
        exec(code, namespace)
    except SystemExit as exc:
        if exc.code not in (None, 0):
            return {"stage": "run", "error": f"the code exited with status {exc.code}"}
    except BaseException as exc:
        return {"stage": "run", "error": _describe(exc)}
    if mode == "program":
        return {"ok": True}
    entrypoint = request.get("entrypoint")
    if entrypoint and not callable(namespace.get(entrypoint)):
        return {"stage": "run", "error": f"the code defines no function {entrypoint!r}"}
    try:
        value = eval(compile(request["call"], "<test>", "eval", dont_inherit=True), namespace)
    except BaseException as exc:
        return {"stage": "call", "error": _describe(exc)}
    return {"ok": True, "value": value}


def _describe_syntax(exc: SyntaxError | ValueError) -> str:
    if isinstance(exc, SyntaxError):
        return f"{type(exc).__name__}: {exc.msg} (line {exc.lineno})"
    return f"SyntaxError: {exc}"


def _describe(exc: BaseException) -> str:
    """`Type: message (line N)`, N the last line of the code under test in the traceback."""
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    line = _last_solution_line(exc.__traceback__)
    return f"{text} (line {line})" if line else text


def _last_solution_line(tb: TracebackType | None) -> int | None:
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == SOLUTION:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _not_json(value: object, exc: Exception) -> str:
    return f"returned a {type(value).__name__}, which JSON cannot represent ({exc})"


def _confine(work: str, readable: tuple[str, ...]) -> None:
    """Landlock on this process where the kernel has it (bubblewrap around the harness
    holds where it has not). The module comes from landlock.py next to the harness (-I
    keeps the working directory off sys.path); it and ctypes leave sys.modules
    afterwards, so importing them again goes through the audit hook."""
    from importlib.util import module_from_spec, spec_from_file_location

    before = set(sys.modules)
    spec = spec_from_file_location("landlock", os.path.join(work, LANDLOCK))
    assert spec is not None and spec.loader is not None
    landlock = module_from_spec(spec)
    spec.loader.exec_module(landlock)  # missing file: the harness fails, never runs open
    try:
        if landlock.abi() >= 1:
            landlock.restrict(read=readable, write=(work, *DEVICES))
    finally:
        for name in set(sys.modules) - before:
            del sys.modules[name]


def _install_guard(work: str, readable: tuple[str, ...]) -> None:
    """Install the audit hook. Everything it consults is bound as a default argument at
    definition: rebinding this module's globals, builtins or os.path changes nothing."""
    writable = (work,)
    process_events = frozenset({"os.exec", "os.fork", "os.forkpty", "os.posix_spawn",
                                "os.spawn", "os.system", "subprocess.Popen", "pty.spawn"})
    # Signals, limits, and the ways to reach the hook's frames and objects (tracing can
    # write a frame's variables back; the gc hands out any object).
    denied_events = frozenset({"os.kill", "os.killpg", "signal.pthread_kill",
                               "resource.setrlimit", "resource.prlimit", "sys.settrace",
                               "sys.setprofile", "sys._current_frames", "gc.get_objects",
                               "gc.get_referrers", "gc.get_referents"})
    native_modules = frozenset({"_ctypes", "_posixsubprocess", "_testcapi",
                                "_testinternalcapi", "_xxsubinterpreters", "landlock"})
    # Events whose path arguments must all lie in the working directory.
    change_events = frozenset({"os.chmod", "os.chown", "os.link", "os.mkdir", "os.remove",
                               "os.rename", "os.rmdir", "os.symlink", "os.truncate",
                               "os.utime", "os.setxattr", "os.removexattr", "os.chflags"})

    def hook(event: str, args: tuple[Any, ...], *, _process: frozenset[str] = process_events,
             _denied_events: frozenset[str] = denied_events,
             _native: frozenset[str] = native_modules, _change: frozenset[str] = change_events,
             _readable: tuple[str, ...] = readable, _writable: tuple[str, ...] = writable,
             _devices: frozenset[str] = DEVICES, _write_flags: int = WRITE_FLAGS,
             _realpath: Any = os.path.realpath, _fspath: Any = os.fspath,
             _fsdecode: Any = os.fsdecode, _isinstance: Any = isinstance,
             _path_types: tuple[type, ...] = (str, bytes, os.PathLike),
             _startswith: Any = str.startswith,
             _denied: type[Exception] = PermissionError, _bool: type = bool) -> None:
        def inside(path: Any, roots: tuple[str, ...]) -> bool:
            resolved = _realpath(_fsdecode(_fspath(path)))
            if resolved in _devices:
                return True
            for root in roots:  # noqa: SIM110 (no builtins: the code may rebind any())
                if resolved == root or _startswith(resolved, root + "/"):
                    return True
            return False

        if _startswith(event, "socket."):
            raise _denied("network access is not allowed in the sandbox")
        if event in _process:
            raise _denied("starting processes is not allowed in the sandbox")
        if event in _denied_events or _startswith(event, "ctypes."):
            raise _denied(f"{event} is not allowed in the sandbox")
        if event == "import":
            name, filename = args[0], args[1]
            if name in _native or (filename and not inside(filename, _readable)):
                raise _denied(f"importing {name} is not allowed in the sandbox")
        elif event == "open":
            path, flags = args[0], args[2]
            if not _isinstance(path, _path_types):
                return  # an open file descriptor
            writing = _bool((flags or 0) & _write_flags)
            if not inside(path, _writable if writing else _readable):
                verb = "writing" if writing else "reading"
                raise _denied(f"{verb} {_fsdecode(_fspath(path))} is not allowed in "
                              "the sandbox (only its working directory)")
        elif event in _change:
            for value in args:
                if _isinstance(value, _path_types) and not inside(value, _writable):
                    raise _denied(f"{event} outside the working directory is not "
                                  "allowed in the sandbox")

    sys.addaudithook(hook)


if __name__ == "__main__":
    main()
