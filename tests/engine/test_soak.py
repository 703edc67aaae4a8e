"""The short soak (tests/soak/): `make run`'s processes on this suite's database kind,
simulated users browsing, running, reviewing, exporting (some downloads abandoned) and
cancelling through the HTTP API, with schemathesis `--checks all` against the same server;
afterwards no 500 in the server's log or in any answer, the database pool's checked-out
count back to 0 (the /metrics gauge assay_db_pool_checked_out, and on PostgreSQL the
API's connections left in a transaction), and reads not slower than before beyond a
generous factor (a test that the server did not degrade for good, not a timing bar:
`make bench` prints the figures of a longer soak).

Run it alone: pytest -m soak tests/engine/test_soak.py (ASSAY_SOAK_SECONDS: longer).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REDIS_URL
from tests.soak.driver import SoakConfig, soak
from tests.soak.stack import SoakStack

pytestmark = pytest.mark.soak

SECONDS = float(os.environ.get("ASSAY_SOAK_SECONDS") or 30)


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[SoakStack]:
    url = os.environ.get("ASSAY_TEST_DATABASE_URL") or f"sqlite:///{tmp_path / 'assay.db'}"
    found = SoakStack(tmp_path, url, REDIS_URL)
    try:
        found.start()
        yield found
    finally:
        found.stop()


def test_users_and_a_fuzzer_leave_the_server_as_they_found_it(stack: SoakStack) -> None:
    result = soak(stack, SoakConfig(seconds=SECONDS, users=4, shared=2, probe_rounds=6))
    report = "\n".join(result.lines())
    print(report)
    problems = result.problems()
    assert not problems, report + "\n\n" + "\n\n".join(problems)
