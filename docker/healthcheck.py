#!/usr/bin/env python3
"""Container health check of Assay's image (stdlib only, so it needs no curl).

With no argument: the API on 127.0.0.1:$ASSAY_PORT (8000) answers /api/health with its
database and Redis up. Workers are not required: the API is healthy before they start,
and /api/health reports them separately. With a URL argument: that URL answers 200
(the fake provider's /_fake/health, for instance). Exit 0 when healthy, 1 otherwise.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.request


def check(url: str | None = None, timeout: float = 4.0) -> tuple[bool, str]:
    api = url is None
    if url is None:
        url = f"http://127.0.0.1:{os.environ.get('ASSAY_PORT') or '8000'}/api/health"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            status, body = response.status, response.read()
    except Exception as exc:  # any failure to answer is "unhealthy", with the reason
        return False, f"{url}: {type(exc).__name__}: {exc}"
    if status != 200:
        return False, f"{url}: HTTP {status}"
    if not api:
        return True, f"{url}: HTTP 200"
    try:
        report = json.loads(body)
        database, redis = report["database"], report["redis"]
    except (ValueError, KeyError, TypeError) as exc:
        return False, f"{url}: unexpected body ({exc})"
    ok = bool(database.get("ok")) and bool(redis.get("ok"))
    return ok, f"{url}: database={database}, redis={redis}, workers={report.get('workers')}"


def main(argv: list[str]) -> int:
    ok, message = check(argv[1] if len(argv) > 1 else None)
    print(message)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
