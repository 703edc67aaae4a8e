"""The project's lists run statements built once with the project (or the user) as a bind
parameter (core/pagination.Listing): each reader gets their own rows, page by page, with
the right totals, whichever project or user the process served before."""

from __future__ import annotations

from typing import Any

from tests.factories import Factory, Session


def _page(browser: Session, url: str, **query: Any) -> tuple[list[int], int]:
    reply = browser.get(url, query_string=query)
    assert reply.status_code == 200, reply.json
    return [item["id"] for item in reply.json["items"]], reply.json["total"]


def test_each_reader_lists_their_own_rows_with_their_totals(factory: Factory) -> None:
    readers = []
    for n, planned in ((1, 1), (2, 3)):
        owner = factory.user()
        project = factory.project(owner, f"Project of {n}")
        for _ in range(planned):
            factory.planned_run(owner, project, cases=1, targets=1)
        readers.append((factory.login(owner), f"/api/projects/{project.id}", planned, project.id))
    for _ in range(2):  # the second round runs what the first one built
        for browser, base, planned, project_id in readers:
            runs, total = _page(browser, f"{base}/runs", page_size=1)
            assert total == planned and len(runs) == 1  # a full first page: counted
            later, _ = _page(browser, f"{base}/runs", page_size=1, page=planned)
            assert later[0] == min(runs + later)  # newest first
            assert _page(browser, f"{base}/runs", status="pending")[1] == planned
            assert _page(browser, f"{base}/runs", status="completed") == ([], 0)
            datasets, total = _page(browser, f"{base}/datasets")
            assert total == planned == len(datasets)
            models, total = _page(browser, f"{base}/models")
            assert total == len(models) > 0
            projects, total = _page(browser, "/api/projects")
            assert (projects, total) == ([project_id], 1)
            assert _page(browser, "/api/projects", role="viewer") == ([], 0)
    first, second = (set(_page(browser, f"{base}/models")[0]) for browser, base, *_ in readers)
    assert not first & second
