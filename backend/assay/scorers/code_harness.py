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

The result is {"ok": true[, "value": ...]} or {"stage": "compile"|"run"|"call"|"value",
"error": "..."} ("value": the call returned something JSON cannot represent).

The audit hook refuses sockets, new processes, signals to other processes, raising
limits, native code (ctypes), reading files outside the working directory and the
standard library, and writing outside the working directory. Audit hooks are not a
security boundary on their own (PEP 578): the sandbox's account, resource limits and
network namespace are; the hook closes the network where namespaces are unavailable and
gives clear errors where the operating system would only give obscure ones.
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

PROCESS_EVENTS = frozenset({"os.exec", "os.fork", "os.forkpty", "os.posix_spawn",
                            "os.spawn", "os.system", "subprocess.Popen", "pty.spawn"})
SIGNAL_EVENTS = frozenset({"os.kill", "os.killpg", "signal.pthread_kill"})
LIMIT_EVENTS = frozenset({"resource.setrlimit", "resource.prlimit"})
# Ways to reach the hook's own state or to run native code.
INTROSPECTION_EVENTS = frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents",
                                  "ctypes.dlopen", "ctypes.dlsym", "ctypes.cdata"})
NATIVE_MODULES = frozenset({"_ctypes", "_posixsubprocess", "_testcapi", "_testinternalcapi"})
# Events whose path arguments must all lie in the working directory.
CHANGE_EVENTS = frozenset({"os.chmod", "os.chown", "os.link", "os.mkdir", "os.remove",
                           "os.rename", "os.rmdir", "os.symlink", "os.truncate",
                           "os.utime", "os.setxattr", "os.removexattr", "os.chflags"})
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
DEVICES = ("/dev/null", "/dev/urandom")


def main() -> None:
    mode = sys.argv[1]
    work = os.path.realpath(os.getcwd())
    with open(os.path.join(work, SOLUTION), encoding="utf-8") as handle:
        source = handle.read()
    with open(os.path.join(work, REQUEST), encoding="utf-8") as handle:
        request = json.load(handle)
    # Bound before the code runs, which may replace builtins or module attributes.
    result_path, dumps, open_file = os.path.join(work, RESULT), json.dumps, open
    _install_guard(work)
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


def _install_guard(work: str) -> None:
    realpath, fspath, fsdecode = os.path.realpath, os.fspath, os.fsdecode
    readable = (work, *(realpath(p) for p in sys.path if p), "/usr/share/zoneinfo")
    writable = (work,)

    def inside(path: Any, roots: tuple[str, ...]) -> bool:
        resolved = realpath(fsdecode(fspath(path)))
        return resolved in DEVICES or any(
            resolved == root or resolved.startswith(root + "/") for root in roots)

    def is_path(value: object) -> bool:
        return isinstance(value, (str, bytes, os.PathLike))

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event.startswith("socket."):
            raise PermissionError("network access is not allowed in the sandbox")
        if event in PROCESS_EVENTS:
            raise PermissionError("starting processes is not allowed in the sandbox")
        if event in SIGNAL_EVENTS or event in LIMIT_EVENTS or event in INTROSPECTION_EVENTS:
            raise PermissionError(f"{event} is not allowed in the sandbox")
        if event == "import":
            name, filename = args[0], args[1]
            if name in NATIVE_MODULES or (filename and not inside(filename, readable)):
                raise PermissionError(f"importing {name} is not allowed in the sandbox")
        elif event == "open":
            path, flags = args[0], args[2]
            if not is_path(path):
                return  # an open file descriptor
            writing = bool((flags or 0) & WRITE_FLAGS)
            if not inside(path, writable if writing else readable):
                verb = "writing" if writing else "reading"
                raise PermissionError(f"{verb} {fsdecode(fspath(path))} is not allowed in "
                                      "the sandbox (only its working directory)")
        elif event in CHANGE_EVENTS:
            for value in args:
                if is_path(value) and not inside(value, writable):
                    raise PermissionError(f"{event} outside the working directory is not "
                                          "allowed in the sandbox")

    sys.addaudithook(hook)


if __name__ == "__main__":
    main()
