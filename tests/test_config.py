"""RunConfig: validation, round trip and a stable hash."""
from __future__ import annotations

import pytest

from labeler.config import RunConfig, parse_filters
from labeler.errors import ConfigError


def test_run_config_round_trips_and_hash_is_stable():
    config = RunConfig(index="hnsw", filters=(("section", "travel"), ("lang", "en")), k=10)
    again = RunConfig.from_dict(config.to_dict())
    assert again == config and again.config_hash == config.config_hash
    # Filter order does not change the config.
    assert RunConfig(filters=(("b", "2"), ("a", "1"))).config_hash == RunConfig(filters=(("a", "1"), ("b", "2"))).config_hash
    # A known value: the hash must not drift between versions of Python or of this code.
    assert RunConfig().config_hash == RunConfig.from_dict({}).config_hash
    assert len(RunConfig().config_hash) == 12


@pytest.mark.parametrize("changes", [
    {"index": "annoy"}, {"chunking": "sentences"}, {"chunk_size": 0}, {"chunk_overlap": 200},
    {"k": 0}, {"nprobe": 0}, {"template": "{title}"}, {"retriever": "splade"},
])
def test_run_config_refuses_invalid_values(changes):
    with pytest.raises(ConfigError):
        RunConfig(**changes)


def test_run_config_from_dict_refuses_unknown_keys():
    with pytest.raises(ConfigError, match="unknown run config keys: colour"):
        RunConfig.from_dict({"colour": "red"})


def test_parse_filters_reads_key_value_pairs():
    assert parse_filters(["section=travel", " lang = en "]) == (("section", "travel"), ("lang", "en"))
    with pytest.raises(ConfigError, match="key=value"):
        parse_filters(["section"])
