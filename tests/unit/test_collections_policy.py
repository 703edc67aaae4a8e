"""Shards ask for fewer garbage collections while they run, and give the thresholds back."""

from __future__ import annotations

import gc

from assay.collections_policy import SHARD_THRESHOLDS, fewer_collections


def test_shards_collect_rarely_and_give_the_thresholds_back() -> None:
    before = gc.get_threshold()
    with fewer_collections():
        assert gc.get_threshold() == SHARD_THRESHOLDS
        assert gc.get_freeze_count() > 0  # what was imported is left out of collections
        with fewer_collections():  # a second shard of the same process (tests use threads)
            assert gc.get_threshold() == SHARD_THRESHOLDS
        assert gc.get_threshold() == SHARD_THRESHOLDS  # the first still runs
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
