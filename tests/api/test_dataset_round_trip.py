"""Dataset export -> import is an exact round trip, whatever the cases hold (issue 15 item 2):
formula triggers, CR, LF, CRLF, tabs, quotes, commas, Unicode line breaks, leading and
trailing whitespace, empty text. CSV cells that a spreadsheet would run are marked as text
in the file and read back without the mark."""

from __future__ import annotations

import csv
import io
from itertools import count
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay.core import csv_cells
from tests.api.test_dataset_import import csv_mapping, export
from tests.factories import Factory, Session

HOSTILE = ["=", "+", "-", "@", "\t", "\r", "\n", "\r\n", "'", '"', ",", " ", "[", "]", "{",
           "\u2028", "\x85", "\ufeff", "é", "日本", "😀", "=1+1", "'=", "''", "=cmd|' /C calc'!A0",
           "@SUM(1)", "-2+3", "\t=1+1", "\r=1+1"]
CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
TEXT = st.lists(st.one_of(st.sampled_from(HOSTILE), st.text(CHARS, max_size=4)),
                max_size=6).map("".join)
TAG = TEXT.filter(lambda t: 0 < len(t) <= 50 and t.strip() != "")
META = st.dictionaries(st.text(CHARS, max_size=8),
                       st.one_of(TEXT, st.integers(), st.booleans(), st.none(),
                                 st.lists(TEXT, max_size=3)), max_size=3)
VARIABLES = ["question_text", "context"]
CASE = st.fixed_dictionaries({
    "input": st.fixed_dictionaries({v: TEXT for v in VARIABLES}),
    "expected": st.one_of(st.none(), TEXT.filter(bool).map(lambda t: {"output": t})),
    "tags": st.lists(TAG, max_size=4),
    "difficulty": st.sampled_from([None, "easy", "medium", "hard"]),
    "metadata": META,
})
KEYS = ("input", "expected", "tags", "difficulty", "metadata", "trace")
_names = count()


def _dataset(browser: Session, project_id: int, cases: list[dict[str, Any]]) -> str:
    reply = browser.post(f"/api/projects/{project_id}/datasets", json={
        "name": f"Hostile {next(_names)}", "kind": "cases", "cases": cases})
    assert reply.status_code == 201, reply.json
    return f"/api/projects/{project_id}/datasets/{reply.json['id']}"


def _cases(browser: Session, base: str) -> list[dict[str, Any]]:
    items = browser.get(base + "/cases", query_string={"page_size": 100}).json["items"]
    return [{k: c[k] for k in KEYS} for c in items]


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(cases=st.lists(CASE, min_size=1, max_size=4), fmt=st.sampled_from(["csv", "jsonl"]))
def test_export_then_import_gives_the_same_cases(factory: Factory,
                                                 cases: list[dict[str, Any]],
                                                 fmt: str) -> None:
    user = factory.user()
    project = factory.project(user, "Round trip")
    browser = factory.login(user)
    source = _dataset(browser, project.id, cases)
    exported = export(browser, source, fmt)
    target = _dataset(browser, project.id, [])
    reply = browser.post(target + "/import", json={
        "format": fmt, "content": exported,
        **({"mapping": csv_mapping(VARIABLES)} if fmt == "csv" else {})})
    assert reply.status_code == 201, reply.json
    assert _cases(browser, target) == _cases(browser, source)
    assert export(browser, target, fmt) == exported


def test_the_reported_cells_are_escaped_quoted_and_read_back(factory: Factory) -> None:
    """The tester's file: formula cells came out as formulas, a `\\r=1+1` cell unquoted with
    a bare CR (so the import read "2 cells for 4 columns"), and a tag `\\t=1+1` as `=1+1`."""
    user = factory.user()
    project = factory.project(user, "Reported")
    browser = factory.login(user)
    case = {"input": {"q": "\r=1+1"}, "expected": {"output": "=HYPERLINK(\"x\")"},
            "tags": ["\t=1+1", "@me"], "metadata": {"note": "-1"}}
    source = _dataset(browser, project.id, [case])
    text = export(browser, source, "csv")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows == [["q", "expected", "tags", "difficulty", "metadata"],
                    ["'\r=1+1", "'=HYPERLINK(\"x\")", "'=1+1,@me", "", '{"note": "-1"}']]
    assert '"\'\r=1+1"' in text  # quoted: the CR is inside the cell, not a line end
    target = _dataset(browser, project.id, [])
    reply = browser.post(target + "/import", json={"format": "csv", "content": text,
                                                   "mapping": csv_mapping(["q"])})
    assert reply.status_code == 201, reply.json
    assert _cases(browser, target) == _cases(browser, source)
    # a tag's own surrounding whitespace is never stored (tags are trimmed on every path)
    assert _cases(browser, target)[0]["tags"] == ["=1+1", "@me"]


@given(st.text(CHARS))
def test_the_mark_comes_off_exactly(text: str) -> None:
    escaped = csv_cells.escape(text)
    assert csv_cells.unescape(escaped) == text
    assert not escaped.startswith(csv_cells.FORMULA_START)


def test_a_spreadsheet_apostrophe_in_a_file_people_wrote_is_taken_as_the_text_mark() -> None:
    assert csv_cells.unescape("'=1+1") == "=1+1"
    assert csv_cells.unescape("'hello") == "'hello"
    assert csv_cells.unescape("'") == "'"
