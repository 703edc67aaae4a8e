"""Refinement guardrails: each rule has a diff that breaks it and no other; a valid diff
passes. The diffs are built with difflib, as a refiner (or a reviewer's editor) would."""

from __future__ import annotations

import difflib

import pytest

from assay.core.experiments import guardrails as g

PROMPT_LINES = [
    "You are a support agent for Acme, a company that sells routers.",
    "Answer the customer's question: {{question}}",
    "The customer's plan is {{plan}}.",
    "Rules:",
    "- be polite",
    "- be brief",
    "- cite the manual",
    "- no guessing",
    "- no prices",
    "- no promises",
    "- no links",
] + [f"Guideline {i}: keep the answer about the customer's own router model." for i in
     range(1, 30)]
PROMPT = "\n".join(PROMPT_LINES) + "\n"


def diff_to(lines: list[str], name: str = "prompt.txt") -> str:
    new = "\n".join(lines) + "\n"
    return "".join(difflib.unified_diff(PROMPT.splitlines(keepends=True),
                                        new.splitlines(keepends=True),
                                        f"a/{name}", f"b/{name}"))


def edited(**replace: str) -> list[str]:
    lines = list(PROMPT_LINES)
    for index, text in replace.items():
        lines[int(index.lstrip("_"))] = text
    return lines


VALID = diff_to(edited(_5="- be brief, and say sorry when the customer had trouble"))
# context that is not in the prompt
NOT_CLEAN = VALID.replace(" - be polite", " - be rude")
LONGER = diff_to(edited(_6="- cite the manual " + "with its section number " * 20))
MANY_LINES = diff_to(edited(**{f"_{i}": PROMPT_LINES[i].replace("own", "exact")
                               for i in range(12, 24)}))
SECTION_GONE = diff_to(PROMPT_LINES[:4] + PROMPT_LINES[11:])
VARIABLE_GONE = diff_to(edited(_2="The customer's plan is {{tier}}."))
TWO_PATCHES = VALID + diff_to(edited(_4="- be polite and warm"), "other.txt")
NOT_A_DIFF = "Make the prompt warmer."

CASES = [
    ("valid", VALID, None),
    ("applies cleanly", NOT_CLEAN, g.APPLIES),
    ("length change <= 15%", LONGER, g.LENGTH),
    ("lines changed <= 20%", MANY_LINES, g.LINES),
    ("no removal of > 5 consecutive lines", SECTION_GONE, g.REMOVAL),
    ("variables unchanged", VARIABLE_GONE, g.VARIABLES),
    ("exactly one patch", TWO_PATCHES, g.ONE_PATCH),
    ("a patch at all", NOT_A_DIFF, g.ONE_PATCH),
    ("changes something", "", g.ONE_PATCH),
]


def broken_rules(diff: str) -> set[str]:
    """Every rule the diff breaks, each measured on its own (not the first one only)."""
    broken = set()
    try:
        patch = g._one_patch(diff)
    except g.GuardrailError as exc:
        return {exc.rule}
    try:
        new = g._apply(patch, PROMPT)
    except g.GuardrailError as exc:
        return {exc.rule}
    changed, run = g._changes(patch)
    if run > g.MAX_CONSECUTIVE_REMOVED:
        broken.add(g.REMOVAL)
    if changed > g.MAX_LINES_CHANGED * len(PROMPT_LINES):
        broken.add(g.LINES)
    if abs(len(new) - len(PROMPT)) / len(PROMPT) > g.MAX_LENGTH_CHANGE:
        broken.add(g.LENGTH)
    if set(g.variables(new)) != set(g.variables(PROMPT)):
        broken.add(g.VARIABLES)
    return broken


@pytest.mark.parametrize(("rule", "diff", "expected"), CASES, ids=[c[0] for c in CASES])
def test_each_rule_has_a_diff_that_breaks_it_alone(rule: str, diff: str,
                                                    expected: str | None) -> None:
    assert broken_rules(diff) == (set() if expected is None else {expected})
    if expected is None:
        checked = g.check(PROMPT, diff)
        assert "say sorry when the customer had trouble" in checked.text
        assert checked.text.count("\n") == PROMPT.count("\n")
        assert checked.lines_changed == 1
        return
    with pytest.raises(g.GuardrailError) as raised:
        g.check(PROMPT, diff)
    assert raised.value.rule == expected
    assert raised.value.message  # says what to fix, for the refiner's retry


def test_the_limits_are_inclusive() -> None:
    # 8 of 40 lines is exactly 20%: allowed
    lines = edited(**{f"_{i}": PROMPT_LINES[i].replace("own", "exact") for i in range(12, 20)})
    assert g.check(PROMPT, diff_to(lines)).lines_changed == 8
    # 5 consecutive lines removed: allowed
    assert g.check(PROMPT, diff_to(PROMPT_LINES[:4] + PROMPT_LINES[9:])).removed_run == 5


def test_a_diff_that_changes_nothing_is_refused() -> None:
    lines = edited(_5="- be brief")
    lines.insert(6, "x")
    added = diff_to(lines)
    assert g.check(PROMPT, added).text != PROMPT
    with pytest.raises(g.GuardrailError) as raised:
        g.check(PROMPT, "--- a/prompt.txt\n+++ b/prompt.txt\n@@ -5,1 +5,1 @@\n- be polite\n")
    assert raised.value.rule in (g.ONE_PATCH, g.APPLIES, g.EMPTY)


def test_hunk_numbers_past_the_end_do_not_apply() -> None:
    diff = "--- a/prompt.txt\n+++ b/prompt.txt\n@@ -90,1 +90,1 @@\n-foo\n+bar\n"
    with pytest.raises(g.GuardrailError) as raised:
        g.check(PROMPT, diff)
    assert raised.value.rule == g.APPLIES
