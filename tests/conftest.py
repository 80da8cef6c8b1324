"""Shared fixtures: every test gets its own data directory; a tiny fake encoder for hand-computed numbers."""
from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path

import numpy as np
import pytest

import labeler  # noqa: E402,F401 - sets offline mode (the one place) before any test imports a model library

REPO = Path(__file__).resolve().parents[1]
DATASETS = REPO.parent / "shared" / "datasets"
SAMPLE = REPO / "sample_corpus"


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    """Never touch a user's .labeler/: each test has its own LABELER_HOME."""
    monkeypatch.setenv("LABELER_HOME", str(tmp_path / "labeler-home"))


def need_datasets() -> Path:
    """The shared test collections; missing is a failure in CI, a skip on a laptop."""
    if not DATASETS.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"{DATASETS} is missing: CI must have ../shared beside the checkout")
        pytest.skip("../shared/datasets not present")
    return DATASETS


class FakeEncoder:
    """Bag-of-words encoder over a fixed vocabulary: one dimension per word, L2-normalized.

    With it, the cosine of two texts is (shared words) / sqrt(|a| * |b|) over distinct
    vocabulary words, so tests can work out expected scores by hand.
    """

    name = "fake-bow"
    identity = "fake-bow@1"

    def __init__(self, vocabulary: list[str]):
        self.vocabulary = {w: i for i, w in enumerate(vocabulary)}
        self.calls = 0
        self.encoded = 0

    @property
    def dimension(self) -> int:
        return len(self.vocabulary)

    def encode(self, texts, *, progress=None, batch_size=64):
        self.calls += 1
        self.encoded += len(texts)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in set(re.findall(r"\w+", text.lower())):
                if word in self.vocabulary:
                    out[i, self.vocabulary[word]] = 1.0
            norm = np.linalg.norm(out[i])
            if norm:
                out[i] /= norm
        if progress:
            progress(len(texts), len(texts), "embedding")
        return out

    def encode_queries(self, questions):
        return self.encode(list(questions))


@pytest.fixture
def fake_encoder_factory():
    return FakeEncoder


def snapshot(db: Path) -> dict[str, list[tuple]]:
    """Every row of every table of a SQLite file, to check a database is unchanged."""
    con = sqlite3.connect(db)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {t: sorted(con.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in tables}
    finally:
        con.close()
