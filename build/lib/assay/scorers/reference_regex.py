"""The regex reference check.

Patterns are written by users and run on model outputs of any length, so a pattern such
as `(a+)+$` could backtrack for hours. Capping the input does not help (that pattern
explodes on 30 characters), so Assay uses the `regex` package (installed with tiktoken),
whose matcher takes a timeout: a match that runs longer than REGEX_TIMEOUT_S is stopped
and the score fails with an error asking for a simpler pattern. Matching runs in a worker
thread with the GIL released, so a slow pattern never stalls the run's event loop.
The syntax is Python's `re` syntax (the `regex` package's compatible mode).
"""

from __future__ import annotations

import asyncio
from typing import Any

import regex

from assay.scorers.base import ScoreResult, Subject
from assay.scorers.deterministic import DeterministicScorer, quote, span, verdict
from assay.scorers.param_fields import Field

REGEX_TIMEOUT_S = 1.0
FLAGS = {"i": regex.IGNORECASE, "m": regex.MULTILINE, "s": regex.DOTALL, "x": regex.VERBOSE}


class Regex(DeterministicScorer):
    """The output matches `pattern` somewhere (anchor it with ^ and $ to match it whole)."""

    kind = "regex"
    fields = (
        Field("pattern", "string", "A regular expression in Python syntax", required=True),
        Field("flags", "string", "Any of i (ignore case), m (^ and $ at line ends), s (. "
              "matches newlines), x (verbose)", default="", allow_empty=True),
    )

    def configure(self, values: dict[str, Any], errors: dict[str, list[str]]) -> None:
        letters: str = values["flags"]
        unknown = sorted(set(letters) - set(FLAGS))
        if unknown:
            errors["flags"] = [f"Unknown flag(s) {''.join(unknown)!r}; use any of: "
                               f"{', '.join(FLAGS)}"]
        flags = 0
        for letter in set(letters) & set(FLAGS):
            flags |= FLAGS[letter]
        self.source: str = values["pattern"]
        try:
            self.pattern = regex.compile(self.source, flags)
        except regex.error as exc:
            errors["pattern"] = [f"Invalid regular expression: {exc}"]

    async def check(self, output: str, subject: Subject) -> ScoreResult:
        try:
            found = await asyncio.to_thread(self.pattern.search, output, concurrent=True,
                                            timeout=REGEX_TIMEOUT_S)
        except TimeoutError:
            return ScoreResult.failed(
                f"The pattern took longer than {REGEX_TIMEOUT_S:g} s on this output "
                f"({len(output)} characters), probably through nested repetition such as "
                f"(a+)+; simplify the pattern.")
        if found is None:
            return verdict(False, f"No match for /{self.source}/")
        start, end = found.span()
        return verdict(True, f"Matched {quote(found.group())} at character {start}",
                       evidence=(span(subject, start, end, self.source),))


SCORERS: dict[str, type] = {Regex.kind: Regex}
