"""The on-disk cache of what a Retriever builds, keyed by the build parts and the corpus fingerprint.

Layout under the cache root (`labeler.paths.cache_dir()` unless a caller gives one):

    emb-<key>/vectors.npy, meta.json   key: model identity, template, chunking, corpus, format
    emb-<key>/index-<key>.faiss        key: index type and its build parameters
    bm25-<key>/                        key: template, chunking, corpus, format (no model)

Search-time settings (k, filters, fusion, reranker, efSearch, nprobe) are in no key: changing
them reuses every file. Writes go to a temporary name and are renamed, so a reader never sees
half a file and two processes racing on one entry both end with a complete copy.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from labeler.config import BuildConfig

CACHE_FORMAT = 1
BM25_FORMAT = 2  # 2: Indic scripts tokenized whole (labeler.lexical.TOKEN_PATTERN)


def cache_key(parts: Mapping[str, Any]) -> str:
    """16 hex digits naming a cache entry (a folder or file name, not a config hash)."""
    # Not labeler.config.config_hash_of: this is another namespace, and changing the formula
    # would orphan every cache on disk (re-embedding a large corpus).
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _tmp_name(path: Path, suffix: str) -> Path:
    return path.with_name(f"{path.stem}.{os.getpid()}.{threading.get_ident()}.tmp{suffix}")


@dataclass(frozen=True)
class DenseCache:
    """Where one (corpus, model, chunking) keeps its vectors and FAISS indexes."""

    folder: Path
    parts: Mapping[str, Any]

    @classmethod
    def at(cls, root: Path, build: BuildConfig, model_identity: str, fingerprint: str) -> "DenseCache":
        """The cache entry for these build parts under `root`."""
        parts = {**build.embedding_key_parts(), "model": model_identity, "corpus": fingerprint, "v": CACHE_FORMAT}
        return cls(root / f"emb-{cache_key(parts)}", parts)

    def load_vectors(self, n_chunks: int) -> np.ndarray | None:
        """The cached vectors, or None when missing or not one row per chunk."""
        path = self.folder / "vectors.npy"
        if not path.exists():
            return None
        vectors = np.load(path)
        return vectors if vectors.shape[0] == n_chunks else None

    def save_vectors(self, vectors: np.ndarray, **meta: Any) -> None:
        """Write the vectors, and a meta.json saying what they are, for a person reading the cache."""
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / "vectors.npy"
        tmp = _tmp_name(path, ".npy")
        np.save(tmp, vectors)
        tmp.replace(path)
        meta = {**self.parts, "n_chunks": int(vectors.shape[0]), "dim": int(vectors.shape[1]), **meta,
                "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        (self.folder / "meta.json").write_text(json.dumps(meta, indent=2, default=str))

    def index_path(self, build: BuildConfig) -> Path:
        """The FAISS index file for this build's index type and build parameters."""
        return self.folder / f"index-{cache_key(build.index_key_parts())}.faiss"

    def load_index(self, build: BuildConfig, n_chunks: int):
        """The cached FAISS index, or None when missing or not over `n_chunks` vectors."""
        from labeler.index import load_index

        path = self.index_path(build)
        if not path.exists():
            return None
        index = load_index(path)
        return index if index.ntotal == n_chunks else None

    def save_index(self, build: BuildConfig, index) -> None:
        """Write the FAISS index atomically."""
        from labeler.index import save_index

        self.folder.mkdir(parents=True, exist_ok=True)
        save_index(index, self.index_path(build))


def bm25_folder(root: Path, build: BuildConfig, fingerprint: str) -> Path:
    """The BM25 cache folder: the chunk texts decide it, the embedding model does not."""
    return root / f"bm25-{cache_key({**build.embedding_key_parts(), 'model': None, 'corpus': fingerprint, 'v': BM25_FORMAT})}"


def load_bm25(folder: Path):
    """The cached BM25 index, or None when missing or damaged (then it is rebuilt)."""
    from labeler.lexical import BM25Index

    if not (folder / "params.index.json").exists():
        return None
    try:
        return BM25Index.load(folder)
    except (OSError, ValueError, KeyError):
        return None


def save_bm25(index, folder: Path) -> None:
    """Write a BM25 index to a temporary folder and rename it into place."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = folder.with_name(f"{folder.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    index.save(tmp)
    try:
        tmp.replace(folder)
    except OSError:  # another process won the race; its copy is identical
        shutil.rmtree(tmp, ignore_errors=True)
