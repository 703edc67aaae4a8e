"""Guardrails on a refinement diff (edison FR-PR-001), enforced on the server for the
refiner's suggestion and for a reviewer's edit alike.

A suggestion is one unified diff against the current prompt text. It passes when:
- it is exactly one patch (one file's diff);
- it applies cleanly: every context and removed line matches the prompt where the hunk
  says (no fuzz: a diff that needs guessing is not the diff the reviewer read);
- the text's length changes by at most 15%;
- at most 20% of the prompt's lines change (a modified line counts once: per hunk,
  the larger of the lines removed and the lines added);
- no more than 5 consecutive lines are removed in one place (no whole section goes;
  rewording lines in place removes none);
- the `{{variables}}` are the same before and after (the cases fill them).

Parsing and applying are whatthepatch's (a maintained library); this module only measures
the result. Every failure names its rule, so the refiner can be told what to fix.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import whatthepatch
from whatthepatch.exceptions import HunkApplyException, WhatThePatchException

MAX_LENGTH_CHANGE = 0.15
MAX_LINES_CHANGED = 0.20
MAX_CONSECUTIVE_REMOVED = 5
# a file header: whatthepatch reads consecutive plain unified diffs as one patch
FILE_HEADER = re.compile(r"^--- [^\n]*\n\+\+\+ ", re.MULTILINE)
VARIABLE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}")

# rule names, as stored with a refused suggestion and returned to the API
ONE_PATCH, APPLIES, LENGTH, LINES, REMOVAL, VARIABLES, EMPTY = (
    "one_patch", "applies_cleanly", "length_change", "lines_changed",
    "consecutive_removal", "variables_unchanged", "no_change")


class GuardrailError(ValueError):
    """A diff broke a rule: `rule` names it, the message says what to change."""

    def __init__(self, rule: str, message: str):
        super().__init__(message)
        self.rule = rule
        self.message = message


@dataclass(frozen=True)
class Checked:
    text: str  # the prompt with the diff applied
    lines_changed: int
    length_change: float  # |new - old| / old, in characters
    removed_run: int  # the longest run of consecutive removed lines


def variables(text: str) -> Counter[str]:
    return Counter(VARIABLE.findall(text))


def _one_patch(diff: str) -> whatthepatch.patch.diffobj:
    if not diff.strip():
        raise GuardrailError(ONE_PATCH, "The diff is empty: give one unified diff")
    try:
        patches = [p for p in whatthepatch.parse_patch(diff) if p.changes]
    except WhatThePatchException as exc:
        raise GuardrailError(ONE_PATCH, f"The diff cannot be parsed: {exc}") from exc
    if not patches:
        raise GuardrailError(ONE_PATCH, "No patch found: give one unified diff with "
                             "'--- a/prompt.txt', '+++ b/prompt.txt' and @@ hunks")
    files = max(len(patches), len(FILE_HEADER.findall(diff)))
    if files > 1:
        raise GuardrailError(ONE_PATCH, f"{files} patches found: give exactly one, "
                             "against prompt.txt")
    return patches[0]


def _apply(patch: whatthepatch.patch.diffobj, text: str) -> str:
    try:
        lines = whatthepatch.apply_diff(patch, text)
    except HunkApplyException as exc:
        raise GuardrailError(APPLIES, f"The diff does not apply to the current prompt: {exc}"
                             ) from exc
    except (IndexError, WhatThePatchException) as exc:  # hunk numbers past the text's end
        raise GuardrailError(APPLIES, f"The diff does not apply to the current prompt: {exc}"
                             ) from exc
    joined = "\n".join(lines)
    return joined + "\n" if text.endswith("\n") and lines else joined


def _changes(patch: whatthepatch.patch.diffobj) -> tuple[int, int]:
    """(lines changed, the most lines removed in one place). A place is a block of changes
    between context lines; what it removes is its removed lines less its added ones, so
    rewording six lines in place removes nothing, and cutting a section does."""
    per_hunk: dict[int, list[int]] = {}
    block = [0, 0]
    longest = 0
    for change in patch.changes:
        counts = per_hunk.setdefault(change.hunk, [0, 0])
        if change.old is not None and change.new is None:  # removed
            counts[0] += 1
            block[0] += 1
        elif change.old is None and change.new is not None:  # added
            counts[1] += 1
            block[1] += 1
        else:  # context: the block ends
            longest = max(longest, block[0] - block[1])
            block = [0, 0]
    longest = max(longest, block[0] - block[1])
    return sum(max(r, a) for r, a in per_hunk.values()), longest


def check(original: str, diff: str) -> Checked:
    """The diff applied to `original`, or GuardrailError naming the first rule it breaks."""
    patch = _one_patch(diff)
    new = _apply(patch, original)
    if new == original:
        raise GuardrailError(EMPTY, "The diff changes nothing")
    changed, removed_run = _changes(patch)
    if removed_run > MAX_CONSECUTIVE_REMOVED:
        raise GuardrailError(REMOVAL, f"The diff removes {removed_run} consecutive lines: "
                             f"at most {MAX_CONSECUTIVE_REMOVED} may go in one place")
    old_lines = max(len(original.splitlines()), 1)
    if changed > MAX_LINES_CHANGED * old_lines:
        raise GuardrailError(LINES, f"The diff changes {changed} of {old_lines} lines: at "
                             f"most {int(MAX_LINES_CHANGED * 100)}% may change")
    length_change = abs(len(new) - len(original)) / max(len(original), 1)
    if length_change > MAX_LENGTH_CHANGE:
        raise GuardrailError(LENGTH, f"The diff changes the prompt's length by "
                             f"{length_change:.0%}: at most "
                             f"{int(MAX_LENGTH_CHANGE * 100)}% is allowed")
    before, after = variables(original), variables(new)
    if set(before) != set(after):
        gone, added = sorted(set(before) - set(after)), sorted(set(after) - set(before))
        parts = ([f"removes {', '.join('{{' + v + '}}' for v in gone)}"] if gone else []) + (
            [f"adds {', '.join('{{' + v + '}}' for v in added)}"] if added else [])
        raise GuardrailError(VARIABLES, f"The diff {' and '.join(parts)}: the template "
                             "variables must stay as they are")
    return Checked(new, changed, length_change, removed_run)
