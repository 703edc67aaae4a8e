"""Facets (edison FR-RV-004): the same outputs grouped by tag, by length and by
difficulty, each group with its mean score (case-clustered bootstrap CI) and pass rate
(Wilson interval over outputs).

- tag: a case with several tags counts in each; a case without tags is "(untagged)";
- length: characters of the case's input or of the output (`length_of`), in the buckets
  the dataset coverage uses: XS < 50 <= S < 200 <= M < 1,000 <= L < 5,000 <= XL, and
  "unknown" when the record has no length;
- difficulty: easy, medium, hard, then any other label, then "unset".

Groups come in that order (tags by number of outputs, most first); empty groups are left
out. The pass rate counts outputs with a verdict; the mean counts outputs with a value."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Literal

from assay.core.stats.bootstrap import MeanCI, Method, check_method, mean_ci
from assay.core.stats.inputs import check_confidence, check_count, check_resamples, finite
from assay.core.stats.intervals import Proportion, wilson_interval

LENGTH_BUCKETS: tuple[tuple[str, int | None], ...] = (
    ("XS", 50), ("S", 200), ("M", 1_000), ("L", 5_000), ("XL", None))
DIFFICULTIES = ("easy", "medium", "hard")
UNTAGGED, UNKNOWN_LENGTH, UNSET = "(untagged)", "unknown", "unset"


@dataclass(frozen=True)
class FacetRecord:
    """One output, with what the facets need of its case."""

    case: Hashable
    value: float | None = None  # normalised score; None when not scored
    passed: bool | None = None  # None when the scorer gives no verdict
    tags: tuple[str, ...] = ()
    difficulty: str | None = None
    input_chars: int | None = None
    output_chars: int | None = None


@dataclass(frozen=True)
class FacetGroup:
    key: str
    n_outputs: int
    n_cases: int
    mean: MeanCI
    pass_rate: Proportion


@dataclass(frozen=True)
class Facets:
    by_tag: tuple[FacetGroup, ...]
    by_length: tuple[FacetGroup, ...]
    by_difficulty: tuple[FacetGroup, ...]
    length_of: str


def length_bucket(chars: int) -> str:
    for name, below in LENGTH_BUCKETS:
        if below is None or chars < below:
            return name
    return LENGTH_BUCKETS[-1][0]


def facets(records: Iterable[FacetRecord], *,
           length_of: Literal["input", "output"] = "input", confidence: float = 0.95,
           n_resamples: int = 2000, seed: int = 0, method: Method = "percentile") -> Facets:
    if length_of not in ("input", "output"):
        raise ValueError(f"length_of must be 'input' or 'output', got {length_of!r}")
    confidence = check_confidence(confidence)
    n_resamples = check_resamples(n_resamples)
    check_method(method)
    rows = [_checked(record, position) for position, record in enumerate(records)]

    def groups(keys_of: Callable[[FacetRecord], Iterable[str]],
               order: Callable[[str, int], tuple[object, ...]]) -> tuple[FacetGroup, ...]:
        grouped: dict[str, list[FacetRecord]] = {}
        for record in rows:
            for key in dict.fromkeys(keys_of(record)):
                grouped.setdefault(key, []).append(record)
        summaries = [_group(key, members, confidence, n_resamples, seed, method)
                     for key, members in grouped.items()]
        return tuple(sorted(summaries, key=lambda g: order(g.key, g.n_outputs)))

    def length_key(record: FacetRecord) -> list[str]:
        chars = record.input_chars if length_of == "input" else record.output_chars
        return [UNKNOWN_LENGTH if chars is None else length_bucket(chars)]

    buckets = [name for name, _ in LENGTH_BUCKETS] + [UNKNOWN_LENGTH]
    return Facets(
        by_tag=groups(lambda r: r.tags or (UNTAGGED,),
                      lambda key, n: (key == UNTAGGED, -n, key)),
        by_length=groups(length_key, lambda key, _: (buckets.index(key),)),
        by_difficulty=groups(lambda r: [r.difficulty or UNSET], _difficulty_order),
        length_of=length_of)


def _difficulty_order(key: str, _: int) -> tuple[object, ...]:
    if key in DIFFICULTIES:
        return (0, DIFFICULTIES.index(key), "")
    return (2, 0, "") if key == UNSET else (1, 0, key)


def _group(key: str, members: list[FacetRecord], confidence: float, n_resamples: int,
           seed: int, method: Method) -> FacetGroup:
    values: dict[Hashable, list[float]] = {}
    for record in members:
        if record.value is not None:
            values.setdefault(record.case, []).append(record.value)
    verdicts = [record.passed for record in members if record.passed is not None]
    return FacetGroup(
        key=key, n_outputs=len(members), n_cases=len({record.case for record in members}),
        mean=mean_ci(values, confidence=confidence, n_resamples=n_resamples, seed=seed,
                     method=method),
        pass_rate=wilson_interval(sum(verdicts), len(verdicts), confidence))


def _checked(record: FacetRecord, position: int) -> FacetRecord:
    where = f"records[{position}]"
    if not isinstance(record, FacetRecord):
        raise ValueError(f"{where} must be a FacetRecord, got {type(record).__name__}")
    if record.value is not None:
        finite(record.value, f"{where}.value")
    if record.passed is not None and not isinstance(record.passed, bool):
        raise ValueError(f"{where}.passed must be True, False or None, got {record.passed!r}")
    if isinstance(record.tags, str) or not all(isinstance(t, str) and t for t in record.tags):
        raise ValueError(f"{where}.tags must be a tuple of non-empty strings, "
                         f"got {record.tags!r}")
    if record.difficulty is not None and not isinstance(record.difficulty, str):
        raise ValueError(f"{where}.difficulty must be a string or None")
    for name in ("input_chars", "output_chars"):
        chars = getattr(record, name)
        if chars is not None:
            check_count(chars, f"{where}.{name}")
    return record
