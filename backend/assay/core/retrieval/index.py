"""Ranking chunks for a query: a BM25 index (bm25s: sparse matrices, English stop words
dropped) built from the chunks stored in the database and kept in memory per set of
chunks, so a run's cells reuse one index instead of re-indexing the documents per call.
Chunks never change once written (re-chunking writes new rows), so the ids of a set name
its index for good."""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

CACHED_INDEXES = 32


@dataclass(frozen=True)
class Hit:
    index: int  # position in the corpus given
    score: float


class Bm25Index:
    def __init__(self, texts: Sequence[str]) -> None:
        self.size = len(texts)
        import bm25s  # brings SciPy: loaded when a run retrieves, not by every engine import

        self._bm25 = bm25s.BM25()
        corpus = bm25s.tokenize(list(texts), stopwords="en", show_progress=False)
        self._bm25.index(corpus, show_progress=False)

    def search(self, query: str, k: int) -> list[Hit]:
        """The k best chunks for `query` that share a term with it, best first."""
        if self.size == 0 or k <= 0:
            return []
        import bm25s

        tokens = bm25s.tokenize([query], stopwords="en", show_progress=False)
        if not tokens.ids or not tokens.ids[0]:
            return []
        found, scores = self._bm25.retrieve(tokens, k=min(k, self.size), show_progress=False)
        return [Hit(int(i), float(s)) for i, s in zip(found[0], scores[0], strict=True)
                if s > 0]


_lock = threading.Lock()
_cache: OrderedDict[tuple[int, ...], Bm25Index] = OrderedDict()


def bm25_for(chunk_ids: tuple[int, ...], texts: Sequence[str]) -> Bm25Index:
    """The index of these chunks (in this order), built once and kept (LRU)."""
    with _lock:
        found = _cache.get(chunk_ids)
        if found is not None:
            _cache.move_to_end(chunk_ids)
            return found
    built = Bm25Index(texts)
    with _lock:
        _cache[chunk_ids] = built
        while len(_cache) > CACHED_INDEXES:
            _cache.popitem(last=False)
    return built


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def rank_embeddings(query: Sequence[float], vectors: Sequence[Sequence[float] | None],
                    k: int) -> list[Hit]:
    scored = [Hit(i, cosine(query, v)) for i, v in enumerate(vectors) if v]
    scored.sort(key=lambda h: -h.score)
    return scored[:k]
