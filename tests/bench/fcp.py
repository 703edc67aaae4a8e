"""First contentful paint of the built SPA in Chromium (issue 7: under 1 s).

In a process of its own (`python -m tests.bench.fcp`, one JSON line out; `--report` for the
printed lines): builds frontend/dist, serves it with `vite preview` (as `assay up` does) in
front of the API (this process, a threaded WSGI server on an SQLite instance), and drives
/usr/bin/chromium from frontend/scripts/fcp.mjs: the login page, then a project page after
signing in, each sample in a fresh browser context (cold cache). index.html carries a static
app shell (the wordmark and "Loading…"), so the first paint waits only for the HTML and the
CSS; when the page's own content (the sign-in form, the runs list) was painted is printed
beside it, with the size of the entry chunk the app waits for.
"""

from __future__ import annotations

import gzip
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]
FRONTEND = ROOT / "frontend"
DIST = FRONTEND / "dist"
BAR_MS = 1000.0
SAMPLES = 5
EMAIL = "fcp@example.com"
PASSWORD = "Bench-password-1!"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(url: str, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            if httpx.get(url, timeout=2).status_code < 500:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{url} did not answer in {seconds:.0f} s")
        time.sleep(0.2)


def entry_chunk() -> dict[str, Any]:
    """The scripts and styles index.html loads before anything renders, in bytes."""
    html = (DIST / "index.html").read_text()
    files = [p for p in (DIST / "assets").iterdir()
             if p.suffix in (".js", ".css") and f"/assets/{p.name}" in html]
    raw = sum(p.stat().st_size for p in files)
    gz = sum(len(gzip.compress(p.read_bytes())) for p in files)
    return {"files": sorted(p.name for p in files), "bytes": raw, "gzip_bytes": gz}


def built_app(prefix: str) -> Any:
    """The bundle as the sources now are (vite build alone: the type check is not timed)
    and an app on a fresh, migrated instance; the caller seeds it in its app context."""
    subprocess.run([str(FRONTEND / "node_modules" / ".bin" / "vite"), "build"], cwd=FRONTEND,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.environ.update({"ASSAY_INSTANCE_PATH": tempfile.mkdtemp(prefix=prefix),
                       "ASSAY_BCRYPT_ROUNDS": "4",
                       "REDIS_URL": os.environ.get("ASSAY_BENCH_REDIS_URL",
                                                   "redis://127.0.0.1:6379/14")})
    os.environ.pop("DATABASE_URL", None)
    from flask_migrate import upgrade

    from assay.app import create_app
    from assay.settings import Settings

    app = create_app(Settings.from_env())
    with app.app_context():
        upgrade()
    return app


def in_browser(app: Any, script: str, *args: str) -> dict[str, Any]:
    """Serve `app` and the built SPA (vite preview), run `node scripts/<script> BASE ARGS...`
    and return the figures it prints as its last line."""
    from werkzeug.serving import make_server

    api_port, web_port = _free_port(), _free_port()
    server = make_server("127.0.0.1", api_port, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    preview = subprocess.Popen(
        [str(FRONTEND / "node_modules" / ".bin" / "vite"), "preview"], cwd=FRONTEND,
        env={**os.environ, "ASSAY_PORT": str(api_port), "ASSAY_WEB_PORT": str(web_port)},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{web_port}"
    try:
        _wait(f"{base}/api/health")
        out = subprocess.run(["node", f"scripts/{script}", base, *args], cwd=FRONTEND,
                             capture_output=True, text=True, check=True, timeout=300)
        return dict(json.loads(out.stdout.strip().splitlines()[-1]))
    finally:
        preview.terminate()
        preview.wait(timeout=10)
        server.shutdown()


def measure() -> dict[str, Any]:
    app = built_app("assay-bench-fcp-")
    from assay.core.auth.service import register
    from assay.core.projects.service import create_project
    from assay.extensions import db

    with app.app_context(), db.factory() as session:
        user = register(session, EMAIL, PASSWORD, None, 4)
        project = create_project(session, user, "FCP bench")
        session.commit()
        project_id = project.id
    figures = in_browser(app, "fcp.mjs", EMAIL, PASSWORD, str(project_id), str(SAMPLES))
    return {**figures, "entry": entry_chunk()}


def report(figures: dict[str, Any]) -> list[str]:
    lines = []
    for key, label in (("login", "login page"), ("project", "project page after sign-in")):
        values, content = figures[f"{key}_ms"], figures[f"{key}_content_ms"]
        median, worst = statistics.median(values), max(values)
        lines.append(f"first contentful paint, {label} (built bundle, Chromium, cold cache, "
                     f"{len(values)} samples): median {median:.0f} ms, worst {worst} ms "
                     f"= {worst / BAR_MS:.3f} of the {BAR_MS / 1000:.0f} s bar; the page's own "
                     f"content painted at median {statistics.median(content):.0f} ms, worst "
                     f"{max(content)} ms")
    entry = figures["entry"]
    lines.append(f"entry chunk (what the app waits for): {entry['bytes'] / 1024:.0f} kB, "
                 f"{entry['gzip_bytes'] / 1024:.0f} kB gzipped, in {len(entry['files'])} files")
    return lines


if __name__ == "__main__":
    import logging

    logging.disable(logging.WARNING)
    result = measure()
    if sys.argv[1:2] == ["--report"]:
        print("\n".join(report(result)))
    else:
        print(json.dumps(result))
