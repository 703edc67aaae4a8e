"""Bradley-Terry ratings from pairwise results, on an Elo-like scale, with bootstrap CIs.

The model: item i beats item j with probability 1 / (1 + exp(θ_j - θ_i)). A tie counts
as half a win for each side. θ is fitted by maximum likelihood (Newton's method with a
backtracking line search, see `fit_log_strengths`) and reported as
rating = 1000 + 400 · log10(e) · (θ - mean θ): ratings average 1000 and a 400-point gap
means 10:1 odds of winning.

Maximum-likelihood ratings exist only when no group of items never lost to the others
(the graph "i scored against j" is strongly connected); an item that won, or lost, every
game would have an infinite rating. `virtual_ties` (default 1) gives every item that many
ties against a virtual opponent of average strength: a weak prior that keeps every rating
finite and fades as games accumulate. `virtual_ties=0` is the pure maximum-likelihood fit;
it raises when the data have no such fit, and bootstrap resamples without one are left
out of the interval (and counted in `discarded_resamples`, making the interval optimistic).

Items listed in `items` without games get no rating and the flag "no_games". Comparisons
that split into separate groups raise: ratings are only comparable within a group.

Intervals: percentile bootstrap over comparisons (comparisons drawn with replacement)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from assay.core.stats.inputs import check_confidence, check_resamples, finite

OUTCOMES = ("a", "b", "tie")
BASE, SCALE = 1000.0, 400.0 / math.log(10)
BLOCK = 1_000_000  # resamples x items² per block, to bound memory
TOLERANCE = 1e-9  # on θ: a millionth of an Elo point


@dataclass(frozen=True)
class Rating:
    item: str
    rating: float | None  # None for an item without games
    low: float | None
    high: float | None
    games: int
    wins: int
    ties: int
    losses: int
    flags: tuple[str, ...]  # "no_games", "undefeated" (won every game), "winless"


@dataclass(frozen=True)
class BradleyTerryResult:
    ratings: tuple[Rating, ...]  # best first; items without games last
    n_comparisons: int
    confidence: float
    n_resamples: int
    virtual_ties: float
    discarded_resamples: int  # resamples without a maximum-likelihood fit (virtual_ties=0)


def bradley_terry(comparisons: Iterable[tuple[str, str, str]], *,
                  items: Iterable[str] = (), virtual_ties: float = 1.0,
                  confidence: float = 0.95, n_resamples: int = 1000,
                  seed: int = 0) -> BradleyTerryResult:
    """`comparisons` are (item_a, item_b, winner) with winner "a", "b" or "tie"."""
    confidence = check_confidence(confidence)
    n_resamples = check_resamples(n_resamples)
    virtual_ties = finite(virtual_ties, "virtual_ties")
    if virtual_ties < 0:
        raise ValueError(f"virtual_ties must not be negative, got {virtual_ties!r}")
    records = _records(comparisons)
    names = list(dict.fromkeys([*_names(items), *(n for a, b, _ in records for n in (a, b))]))
    played = list(dict.fromkeys(n for a, b, _ in records for n in (a, b)))
    index = {name: i for i, name in enumerate(played)}
    cells, counts = np.unique(np.array([(index[a], index[b], OUTCOMES.index(w))
                                        for a, b, w in records], dtype=np.int64).reshape(-1, 3),
                              axis=0, return_counts=True)
    design = _design(cells, len(played))
    points = (counts.astype(np.float64) @ design).reshape(1, len(played), len(played))
    _check_graph(points[0], played, virtual_ties)
    centre = fit_log_strengths(points, virtual_ties)[0] if played else np.zeros(0)
    boot, discarded = _bootstrap(counts, design, len(played), virtual_ties,
                                 n_resamples, seed)
    alpha = 1 - confidence
    bounds = (np.quantile(boot, [alpha / 2, 1 - alpha / 2], axis=0)
              if len(boot) else np.full((2, len(played)), np.nan))
    tallies = _tallies(records)
    ratings = [_rating(name, tallies, float(centre[i]), *bounds[:, i])
               for name, i in index.items()]
    ratings.sort(key=lambda r: r.rating or 0.0, reverse=True)
    ratings += [Rating(name, None, None, None, 0, 0, 0, 0, ("no_games",))
                for name in sorted(set(names) - set(played))]
    return BradleyTerryResult(tuple(ratings), len(records), confidence, n_resamples,
                              virtual_ties, discarded)


def fit_log_strengths(points: NDArray[np.float64], virtual_ties: float) -> NDArray[np.float64]:
    """Maximise the log-likelihood Σ s_ij log sigmoid(θ_i - θ_j) (+ the virtual ties) for
    each of a stack of score matrices (points[r, i, j]: what i scored against j), returning
    θ centred to mean 0. The log-likelihood is concave, so Newton's method with an Armijo
    backtracking search converges from θ = 0; with virtual_ties = 0 the first item is
    held at 0 (θ is only defined up to a shift), which needs a connected graph."""
    stacks, size = points.shape[0], points.shape[1]
    theta = np.zeros((stacks, size))
    games = points + points.transpose(0, 2, 1)
    for _ in range(100):
        gradient, hessian = _derivatives(theta, points, games, virtual_ties)
        if virtual_ties == 0:  # hold θ_0: a zero gradient and a unit curvature there
            gradient[:, 0] = 0
            hessian[:, 0, :] = hessian[:, :, 0] = 0
            hessian[:, 0, 0] = -1
        step = np.linalg.solve(-hessian, gradient[:, :, None])[:, :, 0]
        active = np.abs(step).max(axis=1, initial=0.0) > TOLERANCE
        if not active.any():
            break
        theta[active] += _step_length(theta[active], step[active], gradient[active],
                                      points[active], virtual_ties) * step[active]
    return np.asarray(theta - theta.mean(axis=1, keepdims=True), dtype=np.float64)


def log_likelihood(theta: NDArray[np.float64], points: NDArray[np.float64],
                   virtual_ties: float) -> NDArray[np.float64]:
    gap = theta[:, :, None] - theta[:, None, :]
    value = -(points * np.logaddexp(0, -gap)).sum(axis=(1, 2))
    if virtual_ties:  # half a win and half a loss against θ = 0, virtual_ties times
        value -= virtual_ties / 2 * (np.logaddexp(0, -theta) + np.logaddexp(0, theta)).sum(1)
    return np.asarray(value, dtype=np.float64)


def _derivatives(theta: NDArray[np.float64], points: NDArray[np.float64],
                 games: NDArray[np.float64],
                 virtual_ties: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    win = 1 / (1 + np.exp(theta[:, None, :] - theta[:, :, None]))  # sigmoid(θ_i - θ_j)
    gradient = points.sum(axis=2) - (games * win).sum(axis=2)
    hessian = games * win * (1 - win)
    diagonal = np.arange(theta.shape[1])
    hessian[:, diagonal, diagonal] = -hessian.sum(axis=2)  # an item never plays itself
    if virtual_ties:
        own = 1 / (1 + np.exp(-theta))
        gradient += virtual_ties * (0.5 - own)
        hessian[:, diagonal, diagonal] -= virtual_ties * own * (1 - own)
    return gradient, hessian


def _step_length(theta: NDArray[np.float64], step: NDArray[np.float64],
                 gradient: NDArray[np.float64], points: NDArray[np.float64],
                 virtual_ties: float) -> NDArray[np.float64]:
    """The longest of 1, 1/2, 1/4, ... that raises the log-likelihood enough (Armijo);
    near the optimum (a step below 1e-6) the full Newton step, which rounding in the
    log-likelihood could otherwise reject."""
    current = log_likelihood(theta, points, virtual_ties)
    slope = (gradient * step).sum(axis=1)
    chosen = np.where(np.abs(step).max(axis=1) < 1e-6, 1.0, 0.0)
    for length in 0.5 ** np.arange(40):
        open_ = np.flatnonzero(chosen == 0)
        if not open_.size:
            break
        trial = log_likelihood(theta[open_] + length * step[open_], points[open_],
                               virtual_ties)
        accept = trial >= current[open_] + 1e-4 * length * slope[open_]
        chosen[open_[accept]] = length
    return chosen[:, None]


def _bootstrap(counts: NDArray[np.int64], design: NDArray[np.float64], size: int,
               virtual_ties: float, n_resamples: int,
               seed: int) -> tuple[NDArray[np.float64], int]:
    if not size:
        return np.zeros((n_resamples, 0)), 0
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(int(counts.sum()), counts / counts.sum(), size=n_resamples)
    fits, discarded = [], 0
    rows = max(1, BLOCK // (size * size))
    for start in range(0, n_resamples, rows):
        points = (draws[start:start + rows] @ design).reshape(-1, size, size)
        if virtual_ties == 0:
            fittable = strongly_connected(points)
            discarded += int((~fittable).sum())
            points = points[fittable]
        if len(points):
            fits.append(BASE + SCALE * fit_log_strengths(points, virtual_ties))
    return (np.concatenate(fits) if fits else np.zeros((0, size))), discarded


def _design(cells: NDArray[np.int64], size: int) -> NDArray[np.float64]:
    """Row c: the points one comparison of kind c adds to the flattened score matrix."""
    design = np.zeros((len(cells), size * size))
    for row, (a, b, outcome) in enumerate(cells):
        share_a = (1.0, 0.0, 0.5)[outcome]
        design[row, a * size + b] += share_a
        design[row, b * size + a] += 1 - share_a
    return design


def _check_graph(points: NDArray[np.float64], played: Sequence[str],
                 virtual_ties: float) -> None:
    if not played:
        return
    from scipy.sparse.csgraph import connected_components  # a rating's cost, not an import's

    count, labels = connected_components(points + points.T > 0, directed=False)
    if count > 1:
        raise ValueError("the comparisons form separate groups whose ratings cannot be "
                         f"compared: {_groups(played, labels, count)}; compare items "
                         "across the groups")
    if virtual_ties == 0 and not strongly_connected(points[None])[0]:
        _, labels = connected_components(points > 0, directed=True, connection="strong")
        groups = _groups(played, labels, int(labels.max()) + 1)
        raise ValueError("no maximum-likelihood ratings: a group of items never lost to "
                         "another, so the gap between them would be infinite (groups "
                         f"{groups}); use virtual_ties > 0")


def strongly_connected(points: NDArray[np.float64]) -> NDArray[np.bool_]:
    """For each score matrix in the stack: can every item reach every other along "scored
    against" edges? Reachability by repeated squaring, all matrices at once."""
    size = points.shape[1]
    reach = ((points > 0) | np.eye(size, dtype=bool)).astype(np.float64)
    for _ in range(max(1, math.ceil(math.log2(max(size, 2))))):
        reach = np.minimum(reach @ reach, 1.0)
    return np.asarray((reach > 0).all(axis=(1, 2)), dtype=np.bool_)


def _groups(played: Sequence[str], labels: NDArray[np.int32], count: int) -> str:
    return " and ".join("{" + ", ".join(name for name, label in zip(played, labels, strict=True)
                                        if label == group) + "}" for group in range(count))


def _records(comparisons: Iterable[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    records = []
    for position, record in enumerate(comparisons):
        if isinstance(record, str | bytes) or not isinstance(record, Sequence) \
                or len(record) != 3:
            raise ValueError(f"comparisons[{position}] must be (item_a, item_b, winner), "
                             f"got {record!r}")
        a, b, winner = record
        _names((a, b), f"comparisons[{position}]")
        if a == b:
            raise ValueError(f"comparisons[{position}] compares {a!r} with itself")
        if winner not in OUTCOMES:
            raise ValueError(f"comparisons[{position}] winner must be 'a', 'b' or 'tie', "
                             f"got {winner!r}")
        records.append((a, b, winner))
    return records


def _names(names: Iterable[str], where: str = "items") -> list[str]:
    checked = list(names)
    for name in checked:
        if not isinstance(name, str) or not name:
            raise ValueError(f"{where}: item names must be non-empty strings, got {name!r}")
    return checked


def _tallies(records: list[tuple[str, str, str]]) -> dict[str, list[int]]:
    """wins, ties, losses by item."""
    tallies: dict[str, list[int]] = {}
    for a, b, winner in records:
        for name, result in ((a, {"a": 0, "tie": 1, "b": 2}[winner]),
                             (b, {"b": 0, "tie": 1, "a": 2}[winner])):
            tallies.setdefault(name, [0, 0, 0])[result] += 1
    return tallies


def _rating(name: str, tallies: dict[str, list[int]], theta: float, low: float,
            high: float) -> Rating:
    wins, ties, losses = tallies[name]
    flags = ("undefeated",) if wins and not ties and not losses else \
        ("winless",) if losses and not ties and not wins else ()
    return Rating(name, BASE + SCALE * theta,
                  None if math.isnan(low) else float(low),
                  None if math.isnan(high) else float(high),
                  wins + ties + losses, wins, ties, losses, flags)
