"""FAISS indexes over normalized vectors (inner product = cosine) and filtered search.

`build_index` is the one place an index is built. Filters are applied inside FAISS with an
ID selector (ids are chunk positions), not by over-fetching and discarding.
"""
from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np

from labeler.config import BuildConfig
from labeler.errors import ConfigError


def build_index(vectors: np.ndarray, config: BuildConfig):
    """Build the `flat`, `hnsw` or `ivf` index the config asks for, with every vector added."""
    import faiss

    n, dim = vectors.shape
    if config.index == "flat":
        index = faiss.IndexFlatIP(dim)
    elif config.index == "hnsw":
        index = faiss.IndexHNSWFlat(dim, config.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = config.ef_construction
    else:
        if config.nlist > n:
            raise ConfigError(f"ivf needs nlist <= number of chunks ({n}), got nlist={config.nlist}",
                              hint=f"use --nlist {max(1, n // 39)} or fewer (about sqrt(n) to n/39 is typical).")
        quantizer = faiss.IndexFlatIP(dim)
        index = faiss.IndexIVFFlat(quantizer, dim, config.nlist, faiss.METRIC_INNER_PRODUCT)
        index.cp.min_points_per_centroid = 1  # small corpora: train anyway, quietly
        index.train(vectors)
    index.add(vectors)
    return index


def serialize_index(index) -> bytes:
    """The index as bytes (FAISS's own format)."""
    import faiss

    return faiss.serialize_index(index).tobytes()


def deserialize_index(data: bytes):
    """An index from `serialize_index` bytes; FAISS raises RuntimeError on bytes it cannot read."""
    import faiss

    return faiss.deserialize_index(np.frombuffer(data, dtype=np.uint8))


def save_index(index, path: Path) -> None:
    """Write atomically: a reader never sees half a file (the temporary name is unique per process and thread)."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_bytes(serialize_index(index))
    tmp.replace(path)


def load_index(path: Path):
    """Read an index written by `save_index`."""
    return deserialize_index(path.read_bytes())


def _faiss_params(index_type: str, allowed: np.ndarray | None, ef_search: int, nprobe: int):
    """FAISS SearchParameters carrying efSearch/nprobe and, when filtering, an ID selector.

    Returns (params, keepalive): the selector must outlive the search call.
    """
    import faiss

    sel = faiss.IDSelectorBatch(allowed.astype(np.int64)) if allowed is not None else None
    if index_type == "hnsw":
        params = faiss.SearchParametersHNSW(efSearch=ef_search)
    elif index_type == "ivf":
        params = faiss.SearchParametersIVF(nprobe=nprobe)
    else:
        params = faiss.SearchParameters()
    if sel is not None:
        params.sel = sel
    return params, sel


def search(index, queries: np.ndarray, k: int, *, index_type: str = "flat", ef_search: int = 128, nprobe: int = 8,
           allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Top-k (scores, positions) per query; positions are -1 where fewer than k exist.

    `ef_search` (hnsw) and `nprobe` (ivf) are search-time settings: one built index serves any.
    """
    params, _keepalive = _faiss_params(index_type, allowed, ef_search, nprobe)
    k = max(1, min(k, index.ntotal if allowed is None else len(allowed)))
    return index.search(np.ascontiguousarray(queries, dtype=np.float32), k, params=params)
