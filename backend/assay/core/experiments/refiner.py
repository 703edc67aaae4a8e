"""The refiner (edison FR-PR-001): from an iteration's weakest criteria and its failing
exemplars, ask a model for a small unified diff to the prompt and a note explaining it.

- Weak criteria: the bottom two by mean (normalised 0..1) over the refinement cases.
- Failing exemplars: up to 10 outputs with the lowest mean on the weak criteria, drawn from
  the refinement set only: held-out cases never reach the refiner, so the held-out delta
  measures the prompt and not what the refiner was shown. The judges' per-criterion
  rationales are the textual feedback.
- The reply must hold `<diff>...</diff>` and `<note>...</note>`; the diff must pass the
  guardrails. A bad reply is retried (bounded) with the error fed back as a further user
  turn; after the last attempt the outcome is "no suggestion" with the reason.
- Every call goes through LLMClient; before each one its most cost is reserved from the
  project's and the experiment's budgets (`Purse`), and settled to its actual cost once it
  returns, so the refinement phase stays inside both caps.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from assay.core.experiments import guardrails
from assay.core.runs.budget import max_call_cost
from assay.providers.base import ChatRequest, Endpoint
from assay.providers.client import LLMClient
from assay.providers.pricing import cost_micros

WEAK_CRITERIA = 2
MAX_EXEMPLARS = 10
MAX_ATTEMPTS = 3
MAX_FIELD_CHARS = 2_000  # of an exemplar's input or output shown to the refiner
REPLY_TOKENS = 2_000
FORMAT_RULE = "reply_format"  # a reply without its <diff> or <note>

TEMPLATE = """\
# Prompt Refinement Task

You are an expert prompt engineer. Your task is to propose SMALL, targeted improvements \
to a prompt based on test results.

## Current Objective
{objective}

## Evaluation Rubric
{rubric}

## Current Prompt
```
{prompt}
```

## Weak Areas
The prompt scores poorly on these criteria:
{weak}

## Failing Exemplars
Here are cases where the prompt performed poorly on weak criteria:
{exemplars}
{rejected}## Your Task
Propose SMALL, surgical edits to the prompt to improve performance on the weak criteria.

**Requirements:**
- Keep all existing constraints and requirements
- Make minimal changes (< 10% of text)
- Focus on clarity and specificity for weak criteria
- Do NOT change core structure or intent
- Changes should address the specific issues in failing exemplars
- Keep every {{{{variable}}}} exactly as it is; remove no more than 5 lines in one place

**Output Format:**
Return your response in this EXACT format:

<diff>
--- a/prompt.txt
+++ b/prompt.txt
@@ -1,3 +1,4 @@
 Existing line 1
 Existing line 2
-Line to remove
+Line to add
+Another line to add
 Existing line 3
</diff>

<note>
1-2 paragraph explanation of changes and how they address weak criteria:
- What changed
- Why it should help
- Which criteria it targets
</note>

IMPORTANT: The diff must be a valid unified diff format that can be applied with `patch`."""

EXEMPLAR = """
### Example {index}
**Input:**
{input}

**Output:**
{output}

**Scores:**
{scores}

**Issues:**
{issues}
"""

REJECTED = """
## Suggestions a reviewer rejected
Do not propose these again; take the reviewer's reason into account.
{items}
"""

RETRY = """\
Your reply could not be used: {error}
Answer again in the exact format asked for (<diff>...</diff> then <note>...</note>), \
with a diff against the current prompt exactly as given."""

DIFF = re.compile(r"<diff>\s*\n?(.*?)</diff>", re.DOTALL | re.IGNORECASE)
NOTE = re.compile(r"<note>(.*?)</note>", re.DOTALL | re.IGNORECASE)
FENCE = re.compile(r"^```[a-z]*\n(.*?)\n?```\s*$", re.DOTALL)


@dataclass(frozen=True)
class WeakCriterion:
    name: str
    description: str
    mean: float  # normalised 0..1
    low: int = 1
    high: int = 5

    @property
    def on_scale(self) -> float:
        return self.low + self.mean * (self.high - self.low)


@dataclass(frozen=True)
class Exemplar:
    case_id: int
    input: Any
    output: str
    scores: Mapping[str, float]  # normalised 0..1, per criterion
    rationales: Mapping[str, str]  # the judges' feedback, per criterion
    model: str = ""


@dataclass(frozen=True)
class Brief:
    objective: str
    rubric: Sequence[Mapping[str, Any]]  # the experiment's criteria, as configured
    prompt: str
    weak: Sequence[WeakCriterion]
    exemplars: Sequence[Exemplar]
    rejected: Sequence[Mapping[str, str]] = ()  # earlier suggestions a reviewer rejected


@dataclass(frozen=True)
class RefinerModel:
    endpoint: Endpoint
    model: str
    params: Mapping[str, Any]
    price_in: int | None
    price_out: int | None


@dataclass
class Outcome:
    diff: str | None = None  # None: no suggestion
    note: str | None = None
    new_text: str | None = None
    reason: str | None = None  # why there is no suggestion
    attempts: int = 0
    cost_micros: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    errors: list[str] = field(default_factory=list)  # each refused attempt's reason
    failures: list[dict[str, Any]] = field(default_factory=list)  # the same, by kind and rule

    def refused(self, kind: str, rule: str | None, message: str) -> None:
        """An attempt refused: `kind` is call, format or guardrail; `rule` the guardrail's
        name (guardrails.py), "reply_format" for a reply out of format, else the error
        class of a failed call."""
        self.errors.append(message)
        self.failures.append({"attempt": self.attempts, "kind": kind, "rule": rule,
                              "message": message})


class Purse(Protocol):
    """The experiment's budget, seen from the refinement phase."""

    def reserve(self, micros: int) -> bool: ...  # False: the cap leaves no room

    def settle(self, reserved: int, spent: int, tokens_in: int, tokens_out: int,
               calls: int) -> None: ...


class ReplyError(ValueError):
    pass


def weak_criteria(means: Mapping[str, float], rubric: Sequence[Mapping[str, Any]],
                  count: int = WEAK_CRITERIA) -> list[WeakCriterion]:
    """The `count` criteria with the lowest mean (ties by rubric order)."""
    order = {str(c["name"]): i for i, c in enumerate(rubric)}
    by_name = {str(c["name"]): c for c in rubric}
    ranked = sorted((name for name in means if name in by_name),
                    key=lambda name: (means[name], order[name]))[:count]
    out = []
    for name in ranked:
        scale = by_name[name].get("scale") or {}
        out.append(WeakCriterion(name, str(by_name[name].get("description") or ""),
                                 float(means[name]), int(scale.get("min", 1)),
                                 int(scale.get("max", 5))))
    return out


def failing_exemplars(candidates: Sequence[Exemplar], weak: Sequence[WeakCriterion],
                      refinement_cases: set[int], limit: int = MAX_EXEMPLARS) -> list[Exemplar]:
    """The outputs scoring lowest on the weak criteria, refinement cases only, one per
    case (its worst), at most `limit`."""
    names = [w.name for w in weak]

    def badness(e: Exemplar) -> float:
        values = [e.scores[n] for n in names if n in e.scores]
        return sum(values) / len(values) if values else 1.0

    worst: dict[int, Exemplar] = {}
    for exemplar in candidates:
        if exemplar.case_id not in refinement_cases:
            continue
        held = worst.get(exemplar.case_id)
        if held is None or badness(exemplar) < badness(held):
            worst[exemplar.case_id] = exemplar
    ranked = sorted(worst.values(), key=lambda e: (badness(e), e.case_id))
    return [e for e in ranked if badness(e) < 1.0][:limit]


def _clip(text: str) -> str:
    return text if len(text) <= MAX_FIELD_CHARS else text[:MAX_FIELD_CHARS] + " [...]"


def render(brief: Brief) -> str:
    weak = "\n".join(f"- **{w.name}** (avg score: {w.on_scale:.2f}/{w.high}): {w.description}"
                     for w in brief.weak) or "- (none)"
    exemplars = "".join(EXEMPLAR.format(
        index=i, input=_clip(json.dumps(e.input, ensure_ascii=False, indent=2)),
        output=_clip(e.output), scores=json.dumps({k: round(v, 3) for k, v in e.scores.items()}),
        issues="\n".join(f"- {k}: {v}" for k, v in e.rationales.items() if v) or "- (none)")
        for i, e in enumerate(brief.exemplars))
    rejected = REJECTED.format(items="\n".join(
        f"### Rejected {i}\nReason: {r.get('reason', '')}\n"
        f"```diff\n{_clip(r.get('diff') or '')}\n```" for i, r in enumerate(brief.rejected, 1))
    ) if brief.rejected else ""
    return TEMPLATE.format(objective=brief.objective, rejected=rejected,
                           rubric=json.dumps(list(brief.rubric), ensure_ascii=False, indent=2),
                           prompt=brief.prompt, weak=weak, exemplars=exemplars or "\n(none)\n")


def parse_reply(text: str) -> tuple[str, str]:
    """(diff, note) from a reply, or ReplyError saying what is missing."""
    diff, note = DIFF.search(text), NOTE.search(text)
    if diff is None:
        raise ReplyError("no <diff>...</diff> block was found")
    if note is None or not note.group(1).strip():
        raise ReplyError("no <note>...</note> block with an explanation was found")
    body = diff.group(1).strip("\n")
    fenced = FENCE.match(body.strip())
    if fenced:  # a diff inside a code fence inside the tags
        body = fenced.group(1)
    return body + "\n", note.group(1).strip()


async def refine(client: LLMClient, model: RefinerModel, brief: Brief, purse: Purse,
                 attempts: int = MAX_ATTEMPTS) -> Outcome:
    """A validated suggestion, or no suggestion with the reason."""
    outcome = Outcome()
    if not brief.weak:
        outcome.reason = "No criterion was scored: there is nothing to refine on"
        return outcome
    params = {**model.params, "max_tokens": int(model.params.get("max_tokens") or REPLY_TOKENS)}
    messages: list[dict[str, Any]] = [{"role": "user", "content": render(brief)}]
    for _ in range(attempts):
        reserved = max_call_cost(messages, model.model, params, model.price_in, model.price_out)
        if not purse.reserve(reserved):
            outcome.reason = "Budget reached: the refiner's call would exceed the cap"
            return outcome
        outcome.attempts += 1
        try:
            result = await client.chat(model.endpoint, ChatRequest(model.model, messages,
                                                                   params))
        except BaseException:  # cancelled mid-call: nothing to pay for, the hold goes back
            purse.settle(reserved, 0, 0, 0, 0)
            raise
        response = result.response
        spent = 0
        if response is not None:
            spent = cost_micros(response.tokens_in, response.tokens_out, model.price_in,
                                model.price_out) or 0
            outcome.tokens_in += response.tokens_in or 0
            outcome.tokens_out += response.tokens_out or 0
        outcome.cost_micros += spent
        purse.settle(reserved, spent, response.tokens_in or 0 if response else 0,
                     response.tokens_out or 0 if response else 0, result.attempts)
        if response is None:
            error = result.error
            outcome.refused("call", error.error_class if error else None,
                            f"{error.error_class}: {error.message}" if error else "no reply")
            if error is not None and not error.transient:
                break  # the same request fails the same way
            continue
        try:
            diff, note = parse_reply(response.text)
            checked = guardrails.check(brief.prompt, diff)
        except (ReplyError, guardrails.GuardrailError) as exc:
            if isinstance(exc, guardrails.GuardrailError):
                outcome.refused("guardrail", exc.rule, str(exc))
            else:
                outcome.refused("format", FORMAT_RULE, str(exc))
            messages = [*messages, {"role": "assistant", "content": response.text},
                        {"role": "user", "content": RETRY.format(error=exc)}]
            continue
        outcome.diff, outcome.note, outcome.new_text = diff, note, checked.text
        return outcome
    last = outcome.errors[-1] if outcome.errors else "no reply"
    outcome.reason = f"No valid suggestion after {outcome.attempts} attempt(s): {last}"
    return outcome
