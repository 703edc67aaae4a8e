"""Reference checks on the output's text: equals, contains (and its case-insensitive,
all and any forms), starts_with, must_include and must_not_include. Texts are compared
as given (no Unicode normalisation); case-insensitive matching uses Unicode case rules."""

from __future__ import annotations

import re
from typing import Any

from assay.scorers.base import Evidence, ScoreResult, Subject
from assay.scorers.deterministic import DeterministicScorer, quote, span, verdict
from assay.scorers.param_fields import Field

MAX_SPANS = 50  # evidence kept per result; counts in the rationale stay exact
NO_REFERENCE = ("No expected text to compare with: set the scorer's `value`, or give the "
                "case an expected output.")


def term_pattern(term: str, case_sensitive: bool, whole_words: bool = False) -> re.Pattern[str]:
    """A literal search for `term` (whole words: not inside a longer word)."""
    body = re.escape(term)
    if whole_words:
        body = rf"(?<!\w){body}(?!\w)"
    return re.compile(body, 0 if case_sensitive else re.IGNORECASE)


def expected_text(value: str | None, subject: Subject) -> str | None:
    """The scorer's own value, else the case's reference for this cell."""
    return value if value is not None else subject.reference


def _case_field(default: bool) -> Field:
    return Field("case_sensitive", "boolean", "Match letter case exactly", default=default)


class Equals(DeterministicScorer):
    """The output equals the expected text (`value`, else the case's expected output)."""

    kind = "equals"
    fields = (
        Field("value", "string", "The text to compare with; default: the case's expected "
              "output", allow_empty=True),
        _case_field(True),
        Field("strip", "boolean", "Ignore whitespace at both ends", default=True),
    )

    def configure(self, values: dict[str, Any], errors: dict[str, list[str]]) -> None:
        self.value: str | None = values["value"]
        self.case_sensitive: bool = values["case_sensitive"]
        self.strip: bool = values["strip"]

    def _prepare(self, text: str) -> str:
        text = text.strip() if self.strip else text
        return text if self.case_sensitive else text.casefold()

    async def check(self, output: str, subject: Subject) -> ScoreResult:
        expected = expected_text(self.value, subject)
        if expected is None:
            return ScoreResult.failed(NO_REFERENCE)
        got, want = self._prepare(output), self._prepare(expected)
        if got == want:
            return verdict(True, f"Output equals {quote(expected)}")
        at = next((i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b),
                  min(len(got), len(want)))
        return verdict(False, f"Output differs from the expected text at character {at}: "
                              f"expected {quote(want[at:at + 30])}, got {quote(got[at:at + 30])}")


class Contains(DeterministicScorer):
    """The output contains `value` (letter case must match)."""

    kind = "contains"
    case_sensitive = True
    fields = (Field("value", "string", "The text to find", required=True),)

    def configure(self, values: dict[str, Any], errors: dict[str, list[str]]) -> None:
        self.value: str = values["value"]
        self.pattern = term_pattern(self.value, self.case_sensitive)

    async def check(self, output: str, subject: Subject) -> ScoreResult:
        found = self.pattern.search(output)
        if found is None:
            return verdict(False, f"{quote(self.value)} not found in the output")
        return verdict(True, f"Found {quote(self.value)} at character {found.start()}",
                       evidence=(span(subject, found.start(), found.end(), self.value),))


class IContains(Contains):
    """The output contains `value`, ignoring letter case."""

    kind = "icontains"
    case_sensitive = False


class _TermList(DeterministicScorer):
    """Shared by the kinds that look for several literal terms."""

    list_field = "values"

    def configure(self, values: dict[str, Any], errors: dict[str, list[str]]) -> None:
        self.terms: list[str] = values[self.list_field]
        whole = bool(values.get("whole_words", False))
        self.patterns = [term_pattern(term, values["case_sensitive"], whole)
                         for term in self.terms]

    def matches(self, output: str) -> dict[str, list[tuple[int, int]]]:
        """Where each term occurs (terms that do not occur are absent)."""
        found: dict[str, list[tuple[int, int]]] = {}
        for term, pattern in zip(self.terms, self.patterns, strict=True):
            places = [(m.start(), m.end()) for m in pattern.finditer(output)]
            if places:
                found[term] = places
        return found

    def evidence(self, subject: Subject, found: dict[str, list[tuple[int, int]]],
                 every: bool) -> tuple[Evidence, ...]:
        """The first place of each found term, or every place when `every`."""
        spans = [span(subject, start, end, term) for term, places in found.items()
                 for start, end in (places if every else places[:1])]
        spans.sort(key=lambda item: item.start or 0)
        return tuple(spans[:MAX_SPANS])

    def missing(self, found: dict[str, list[tuple[int, int]]]) -> list[str]:
        return [term for term in self.terms if term not in found]


def _list(terms: list[str]) -> str:
    return ", ".join(quote(term, 40) for term in terms)


class ContainsAll(_TermList):
    """The output contains every one of `values` (1.0 only when all are found)."""

    kind = "contains_all"
    fields = (Field("values", "strings", "The texts that must all occur", required=True),
              _case_field(True))

    async def check(self, output: str, subject: Subject) -> ScoreResult:
        found = self.matches(output)
        missing = self.missing(found)
        evidence = self.evidence(subject, found, every=False)
        if missing:
            return verdict(False, f"{len(found)} of {len(self.terms)} found; missing: "
                                  f"{_list(missing)}", evidence=evidence)
        return verdict(True, f"All {len(self.terms)} found", evidence=evidence)


class ContainsAny(_TermList):
    """The output contains at least one of `values`."""

    kind = "contains_any"
    fields = (Field("values", "strings", "The texts of which one must occur", required=True),
              _case_field(True))

    async def check(self, output: str, subject: Subject) -> ScoreResult:
        found = self.matches(output)
        if not found:
            return verdict(False, f"None found of: {_list(self.terms)}")
        return verdict(True, f"Found: {_list(list(found))}",
                       evidence=self.evidence(subject, found, every=False))


class StartsWith(DeterministicScorer):
    """The output starts with `value`."""

    kind = "starts_with"
    fields = (
        Field("value", "string", "The text the output must start with", required=True),
        _case_field(True),
        Field("strip", "boolean", "Ignore whitespace before the output's first character",
              default=True),
    )

    def configure(self, values: dict[str, Any], errors: dict[str, list[str]]) -> None:
        self.value: str = values["value"]
        self.strip: bool = values["strip"]
        self.pattern = term_pattern(self.value, values["case_sensitive"])

    async def check(self, output: str, subject: Subject) -> ScoreResult:
        start = len(output) - len(output.lstrip()) if self.strip else 0
        found = self.pattern.match(output, start)
        if found is None:
            head = output[start:start + len(self.value) + 10]
            return verdict(False, f"Output starts with {quote(head)}, not {quote(self.value)}")
        return verdict(True, f"Output starts with {quote(self.value)}",
                       evidence=(span(subject, found.start(), found.end(), self.value),))


_TERM_FIELDS = (_case_field(False),
                Field("whole_words", "boolean", "Match whole words only (not inside a longer "
                      "word)", default=False))


class MustInclude(_TermList):
    """Every one of `terms` must occur; the value is the share found."""

    kind = "must_include"
    list_field = "terms"
    fields = (Field("terms", "strings", "Terms the output must include", required=True),
              *_TERM_FIELDS)

    async def check(self, output: str, subject: Subject) -> ScoreResult:
        found = self.matches(output)
        missing = self.missing(found)
        share = len(found) / len(self.terms)
        rationale = (f"Includes all {len(self.terms)} terms" if not missing else
                     f"Includes {len(found)} of {len(self.terms)} terms; missing: "
                     f"{_list(missing)}")
        return ScoreResult(share, not missing, rationale=rationale,
                           evidence=self.evidence(subject, found, every=False),
                           details={"missing": missing})


class MustNotInclude(_TermList):
    """None of `terms` may occur; evidence marks every occurrence of each one found."""

    kind = "must_not_include"
    list_field = "terms"
    fields = (Field("terms", "strings", "Terms the output must not include", required=True),
              *_TERM_FIELDS)

    async def check(self, output: str, subject: Subject) -> ScoreResult:
        found = self.matches(output)
        if not found:
            return verdict(True, f"None of the {len(self.terms)} forbidden terms occur")
        counts = ", ".join(f"{quote(term, 40)} ({len(places)})" for term, places in found.items())
        return verdict(False, f"Forbidden terms found: {counts}",
                       evidence=self.evidence(subject, found, every=True),
                       details={"found": list(found)})


SCORERS: dict[str, type] = {cls.kind: cls for cls in (
    Equals, Contains, IContains, ContainsAll, ContainsAny, StartsWith, MustInclude,
    MustNotInclude)}
