"""Connections always come back, against `assay serve` as `make run` serves it (gunicorn,
gthread, the server's relaxed garbage collection): 50 downloads of each export, and 50
abandoned mid-body by a client that closes its socket, leave no connection checked out of
the pool (its gauge on /metrics), and the API keeps answering. Every export once leaked a
connection (api/bodies.py says how); with a pool of 4 the fifth export then hung."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from flask import Flask

from tests.factories import Factory
from tests.faults.stack import free_port

THREADS = 4  # the pool holds as many: a leak would exhaust it within five exports
EXPORTS = 50
METRICS_TOKEN = "pool-test-metrics-token"


@pytest.fixture
def served(app: Flask, test_env: dict[str, str], tmp_path: Path) -> Iterator[str]:
    port = free_port()
    env = {**os.environ, **test_env, "ASSAY_INSTANCE_PATH": str(tmp_path),  # its own metrics
           "ASSAY_METRICS_TOKEN": METRICS_TOKEN, "ASSAY_DB_MAX_OVERFLOW": "0",
           "ASSAY_DB_POOL_TIMEOUT_S": "2", "ASSAY_WEB_WORKERS": "1"}
    env.pop("ASSAY_DB_POOL_SIZE", None)  # serve makes it its threads
    proc = subprocess.Popen([sys.executable, "-m", "assay", "serve", "--port", str(port),
                             "--threads", str(THREADS)], env=env, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, "assay serve exited"
            try:
                if httpx.get(f"{url}/api/health", timeout=2).status_code in (200, 503):
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "assay serve did not come up"
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def _checked_out(client: httpx.Client) -> float:
    text = client.get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}).text
    found = re.search(r'^assay_db_pool_checked_out\{pool="main"\} (\S+)$', text, re.M)
    assert found, text[:500]
    return float(found.group(1))


def _returned(client: httpx.Client) -> None:
    """Polls: a closed download's teardown runs on the server's thread after the client
    has gone."""
    deadline = time.monotonic() + 30
    while (out := _checked_out(client)) != 0:
        assert time.monotonic() < deadline, f"{out} connections still checked out"
        time.sleep(0.2)


@contextmanager
def _partly_read(url: str, path: str, token: str) -> Iterator[None]:
    """Reads the headers and some of the body, then (on leaving) closes the socket. The
    client's small receive buffer and the body's size (over the kernel's largest send
    buffer) keep the server's body suspended mid-way meanwhile."""
    host, port = url.removeprefix("http://").split(":")
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.settimeout(30)
        sock.connect((host, int(port)))
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}"
                     "\r\n\r\n".encode())
        got = b""
        while len(got) < 65536:
            chunk = sock.recv(65536)
            assert chunk, got[:300]
            got += chunk
        assert got.startswith(b"HTTP/1.1 200"), got[:300]
        yield


def _big_dataset(client: httpx.Client, base: str) -> tuple[str, int]:
    """A questions dataset of ~6 MB (seven bulk adds under the 1 MB body limit)."""
    text = "lorem ipsum " * 2500  # 30 kB
    reply = client.post(f"{base}/datasets", json={"name": "Big", "kind": "questions"})
    assert reply.status_code == 201, reply.text
    dataset = f"{base}/datasets/{reply.json()['id']}"
    for batch in range(7):
        cases = [{"input": {"question": f"{batch}-{i} {text}"}} for i in range(28)]
        assert client.post(f"{dataset}/cases/bulk", json={"cases": cases}).status_code == 201
    return dataset, len(text) * 7 * 28


def _largest_send_buffer() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/tcp_wmem").read_text().split()[2])
    except (OSError, IndexError, ValueError):
        return 4 << 20


def test_exports_read_or_abandoned_return_every_connection(
        served: str, factory: Factory) -> None:
    owner = factory.user()
    project = factory.project(owner)
    run_id = factory.finished_run(owner, project, execute=True)
    token = factory.api_token(owner)
    base = f"/api/projects/{project.id}"
    headers: dict[str, Any] = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=served, headers=headers, timeout=30) as client:
        dataset, size = _big_dataset(client, base)
        assert size > _largest_send_buffer() + (1 << 20)  # the server cannot send it all
        small = client.post(f"{base}/datasets", json={"name": "Small", "kind": "questions",
                                                       "cases": [{"input": {"question": "q"}}]})
        exports = [f"{base}/datasets/{small.json()['id']}/export?format={f}"
                   for f in ("csv", "jsonl")]
        exports += [f"{base}/runs/{run_id}/export?format={f}" for f in ("json", "csv", "junit")]
        for path in exports:
            for _ in range(EXPORTS):
                reply = client.get(path)
                assert reply.status_code == 200 and reply.content, (path, reply.text[:300])
        _returned(client)

        with _partly_read(served, f"{dataset}/export?format=jsonl", token):
            assert _checked_out(client) == 1  # the gauge sees the body's connection
        _returned(client)
        for i in range(EXPORTS):
            with _partly_read(served, f"{dataset}/export?format={('jsonl', 'csv')[i % 2]}",
                              token):
                pass  # abandoned halfway
        _returned(client)
        assert client.get(f"{base}/datasets").status_code == 200  # and the API still answers
        assert client.get("/api/health").json()["database"] == {"ok": True}
