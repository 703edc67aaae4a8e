"""The refinement / held-out split of an experiment's cases, stratified by tag and
reproducible from its seed: the refiner sees only refinement cases, held-out cases prove
that a better prompt is better beyond the data it was tuned on."""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Sequence


def stratum(tags: Sequence[str] | None) -> str:
    """Cases with the same first tag (sorted) share a stratum; untagged ones share one."""
    return sorted(tags)[0] if tags else ""


def split_cases(cases: Sequence[tuple[int, Sequence[str] | None]], fraction: float,
                seed: int) -> tuple[list[int], list[int]]:
    """(refinement ids, held-out ids). Each stratum gives round(fraction x its size) cases
    to the held-out set, the remainders being settled across strata so the held-out set is
    round(fraction x all) overall; at least one case stays on each side when there are two
    or more cases and fraction > 0. Same cases, fraction and seed: same split."""
    if fraction <= 0 or len(cases) < 2:
        return [case_id for case_id, _ in cases], []
    rng = random.Random(seed)
    groups: dict[str, list[int]] = defaultdict(list)
    for case_id, tags in cases:
        groups[stratum(tags)].append(case_id)
    want = min(max(1, round(fraction * len(cases))), len(cases) - 1)
    shares = {key: fraction * len(ids) for key, ids in sorted(groups.items())}
    taken = {key: math.floor(share) for key, share in shares.items()}
    # largest remainders first (ties broken by the seeded shuffle) until the total is met
    order = sorted(shares, key=lambda k: (-(shares[k] - taken[k]), rng.random()))
    for key in order:
        if sum(taken.values()) >= want:
            break
        if taken[key] < len(groups[key]):
            taken[key] += 1
    held: set[int] = set()
    for key, ids in sorted(groups.items()):
        shuffled = sorted(ids)
        rng.shuffle(shuffled)
        held.update(shuffled[:taken[key]])
    ordered = [case_id for case_id, _ in cases]
    return ([c for c in ordered if c not in held], [c for c in ordered if c in held])
