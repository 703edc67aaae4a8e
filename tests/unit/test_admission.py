"""An API process works on a few requests at once, the others waiting in arrival order
(assay/admission.py); a streamed body and a failed request leave their place."""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any

import pytest

from assay.admission import ARRIVED, Admission, Places


def _wait_for(condition: Any, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.001)


def test_no_more_than_its_places_work_at_once() -> None:
    inside, most = 0, 0
    lock = threading.Lock()

    def app(environ: dict[str, Any], _start: Any) -> Iterable[bytes]:
        nonlocal inside, most
        assert environ[ARRIVED] <= time.perf_counter()  # the latency metric counts the wait
        with lock:
            inside += 1
            most = max(most, inside)
        time.sleep(0.01)
        with lock:
            inside -= 1
        return [b"ok"]

    admitted = Admission(app, 3)
    threads = [threading.Thread(target=admitted, args=({}, None)) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert most == 3 and inside == 0


def test_a_freed_place_goes_to_the_longest_waiter() -> None:
    places = Places(1)
    entered: list[int] = []
    places.__enter__()  # the one place is taken

    def request(n: int) -> None:
        with places:
            entered.append(n)

    waiters = []
    for n in range(5):
        waiter = threading.Thread(target=request, args=(n,))
        waiter.start()
        waiters.append(waiter)
        _wait_for(lambda n=n: len(places._waiting) == n + 1)  # queued in this order
    places.__exit__(None, None, None)
    for waiter in waiters:
        waiter.join(10)
    assert entered == [0, 1, 2, 3, 4]
    with places:  # every place came back
        assert not places._waiting


def test_a_streamed_body_and_a_failure_leave_their_place() -> None:
    def app(environ: dict[str, Any], _start: Any) -> Iterable[bytes]:
        if environ.get("fail"):
            raise RuntimeError("the view failed")

        def stream() -> Iterator[bytes]:
            yield b"data: 1\n\n"

        return stream()

    admitted = Admission(app, 1)
    stream = admitted({}, None)  # a progress stream, still open
    with pytest.raises(RuntimeError):
        admitted({"fail": True}, None)
    done = threading.Event()
    threading.Thread(target=lambda: (admitted({}, None), done.set())).start()
    assert done.wait(5)  # the place was free for the next request
    assert list(stream) == [b"data: 1\n\n"]


class _SlowUpload:
    """A client's body that arrives only when `go` is set."""

    def __init__(self, body: bytes, go: threading.Event):
        self.body, self.go = body, go

    def read(self, size: int = -1) -> bytes:
        assert self.go.wait(10)
        chunk, self.body = self.body[:size], self.body[size:]
        return chunk


def test_a_slow_upload_holds_no_place_and_arrives_whole() -> None:
    got: list[bytes] = []

    def app(environ: dict[str, Any], _start: Any) -> Iterable[bytes]:
        got.append(environ["wsgi.input"].read())
        return [b"ok"]

    admitted = Admission(app, 1, max_body=10 << 20)
    go = threading.Event()
    body = b"x" * (3 << 20)  # beyond the part kept in memory
    upload = threading.Thread(target=admitted, args=(
        {"CONTENT_LENGTH": str(len(body)), "wsgi.input": _SlowUpload(body, go)}, None),
        daemon=True)
    upload.start()
    other = threading.Thread(target=admitted, args=({"wsgi.input": io.BytesIO()}, None),
                             daemon=True)
    other.start()
    other.join(5)  # the one place is free while the upload is still coming
    go.set()
    assert not other.is_alive() and got[0] == b""
    upload.join(10)
    assert got[1] == body


def test_a_body_over_the_limit_is_left_to_the_app_unread() -> None:
    seen: list[Any] = []

    def app(environ: dict[str, Any], _start: Any) -> Iterable[bytes]:
        seen.append(environ["wsgi.input"])
        return [b"too big"]

    stream = _SlowUpload(b"x" * 100, threading.Event())  # reading it would block
    Admission(app, 1, max_body=10)({"CONTENT_LENGTH": "100", "wsgi.input": stream}, None)
    assert seen == [stream]
