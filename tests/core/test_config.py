"""RunConfig: validation, round trip, a pinned hash, and its build / search halves."""
from __future__ import annotations

import pytest

from labeler.config import BuildConfig, RunConfig, SearchParams, config_hash_of, parse_filters
from labeler.errors import ConfigError


def test_run_config_round_trips():
    config = RunConfig(index="hnsw", filters=(("section", "travel"), ("lang", "en")), k=10)
    again = RunConfig.from_dict(config.to_dict())
    assert again == config and again.config_hash == config.config_hash


@pytest.mark.parametrize("config, expected", [
    # Literal values: saved runs reference these hashes, so they must never drift (Python version,
    # field order, a refactoring). Computed with the code of commit 785ca37.
    (RunConfig(), "a900264e3fce"),
    (RunConfig(index="hnsw", filters=(("section", "travel"), ("lang", "en")), k=10), "810f267d9624"),
    # Filter order does not change the config.
    (RunConfig(index="hnsw", filters=(("lang", "en"), ("section", "travel")), k=10), "810f267d9624"),
    # The mode was stored as `retriever` until it was renamed; computed with the code before the rename.
    (RunConfig(mode="hybrid", k=20), "44a1b6cc418d"),
])
def test_run_config_hash_is_pinned(config, expected):
    assert config.config_hash == expected


def test_config_hash_of_a_plain_dict_matches_the_run_config():
    # The store hashes a config given as a dict with the same formula.
    assert config_hash_of(RunConfig().to_dict()) == "a900264e3fce"


@pytest.mark.parametrize("changes", [
    {"index": "annoy"}, {"chunking": "sentences"}, {"chunk_size": 0}, {"chunk_overlap": 200},
    {"k": 0}, {"nprobe": 0}, {"template": "{title}"}, {"mode": "splade"}, {"rrf_k": 0}, {"hnsw_m": 0},
])
def test_run_config_refuses_invalid_values(changes):
    with pytest.raises(ConfigError):
        RunConfig(**changes)


def test_run_config_from_dict_reads_a_saved_config_that_says_retriever_for_mode():
    saved = RunConfig(mode="bm25").to_dict()
    saved["retriever"] = saved.pop("mode")  # a run saved before the rename
    config = RunConfig.from_dict(saved)
    assert config.mode == "bm25" and config.config_hash == RunConfig(mode="bm25").config_hash
    assert "retriever" not in config.to_dict() and config.to_dict()["mode"] == "bm25"


def test_run_config_from_dict_refuses_unknown_keys():
    with pytest.raises(ConfigError, match="unknown run config keys: colour"):
        RunConfig.from_dict({"colour": "red"})


def test_parse_filters_reads_key_value_pairs():
    assert parse_filters(["section=travel", " lang = en "]) == (("section", "travel"), ("lang", "en"))
    with pytest.raises(ConfigError, match="key=value"):
        parse_filters(["section"])


def test_run_config_halves_default_to_the_halves_defaults():
    assert RunConfig().build() == BuildConfig() and RunConfig().search_params() == SearchParams()


@pytest.mark.parametrize("changes", [
    {"k": 5}, {"filters": (("section", "it"),)}, {"mode": "hybrid"}, {"rrf_k": 10},
    {"reranker": "/models/ce"}, {"rerank_top": 5}, {"abstain_threshold": 0.3}, {"ef_search": 16}, {"nprobe": 2},
    # Parameters of what is not in use build nothing different.
    {"chunk_size": 100, "chunk_overlap": 10}, {"hnsw_m": 8}, {"nlist": 8},
])
def test_run_config_search_time_changes_keep_the_build(changes):
    changed = RunConfig(**changes)
    assert changed.build() == RunConfig().build()
    assert changed.build().to_json() == RunConfig().build().to_json()  # the app's cache key


@pytest.mark.parametrize("changes", [
    {"model": "/models/other"}, {"template": "{text}"}, {"chunking": "window"},
    {"chunking": "window", "chunk_size": 100, "chunk_overlap": 10}, {"chunking": "window", "chunk_unit": "chars"},
    {"index": "hnsw"}, {"index": "hnsw", "hnsw_m": 8}, {"index": "hnsw", "ef_construction": 40},
    {"index": "ivf"}, {"index": "ivf", "nlist": 8},
])
def test_run_config_build_changes_change_the_build(changes):
    build = RunConfig(**changes).build()
    assert build != RunConfig().build() and BuildConfig.from_json(build.to_json()) == build


@pytest.mark.parametrize("changes", [{"k": 5}, {"mode": "bm25"}, {"filters": (("a", "1"),)}, {"nprobe": 3}])
def test_run_config_search_params_carry_the_search_fields(changes):
    params = RunConfig(**changes).search_params()
    assert params == SearchParams(**changes)


def test_search_params_refuse_invalid_values():
    with pytest.raises(ConfigError, match="mode must be one of"):
        SearchParams(mode="splade")
    with pytest.raises(ConfigError, match="k must be positive"):
        SearchParams().with_(k=0)
