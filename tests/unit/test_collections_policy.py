"""Shards ask for fewer garbage collections while they run and give the thresholds back;
an API server process asks for them for good once its app is loaded."""

from __future__ import annotations

import gc

from assay.collections_policy import (
    SERVER_THRESHOLDS,
    SHARD_THRESHOLDS,
    fewer_collections,
    for_a_server,
)


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


def test_a_server_freezes_its_loaded_app_and_collects_young_objects_rarely() -> None:
    before = gc.get_threshold()
    try:
        for_a_server()
        assert gc.get_threshold() == SERVER_THRESHOLDS
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
