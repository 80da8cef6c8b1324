"""The on-disk cache of what a Retriever builds: entries that carry a manifest and heal when damaged.

Layout under the cache root (`labeler.paths.cache_dir()` unless a caller gives one):

    vectors-<key>/                      key: model identity (labeler.retrieval.vector_store)
        model.json                      the model's dimension, so a cached open need not load it
        shard-<id>/vectors.npy, keys.npy, manifest.json
    index-<key>/index.faiss, manifest.json
                                        key: model, the ordered chunk texts, index type and parameters
    bm25-<key>/<bm25s files>, manifest.json
                                        key: template, chunking, corpus, format (no model)

Every entry is a folder written under a temporary name unique to the process and thread, its
manifest (format, kind, shape, checksums of every file) written last, then renamed into place in
one step: a reader sees a whole entry or none, and of two processes racing on one entry the first
rename wins and the second drops its identical copy. A reader trusts nothing without a valid
manifest: an entry that fails any check is logged (logger `labeler.cache`), moved aside and built
again, so a damaged cache costs time, never a crash or wrong scores.

Search-time settings (k, filters, fusion, reranker, efSearch, nprobe) are in no key: changing
them reuses every file.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from labeler.config import BuildConfig

logger = logging.getLogger("labeler.cache")

CACHE_FORMAT = 1  # the pre-manifest layout (emb-<key>/vectors.npy): read once to adopt its vectors
ENTRY_FORMAT = 2
INDEX_FORMAT = 1
BM25_FORMAT = 3  # 2: Indic scripts tokenized whole (labeler.retrieval.lexical.TOKEN_PATTERN); 3: with a manifest
MANIFEST = "manifest.json"
STALE_SECONDS = 3600  # a temporary or trash folder this old was left by a process that died


class DamagedEntry(Exception):
    """A cache entry failed a check: it is discarded and rebuilt, never used."""


def cache_key(parts: Mapping[str, Any]) -> str:
    """16 hex digits naming a cache entry (a folder or file name, not a config hash)."""
    # Not labeler.config.config_hash_of: this is another namespace, and changing the formula
    # would orphan every cache on disk (re-embedding a large corpus).
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _tmp_name(path: Path, suffix: str) -> Path:
    return path.with_name(f"{path.stem}.{os.getpid()}.{threading.get_ident()}.tmp{suffix}")


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def sweep_stale(folder: Path) -> None:
    """Remove temporary and trash folders under `folder` left by a process that died while writing."""
    cutoff = time.time() - STALE_SECONDS
    try:
        leftovers = [p for p in folder.iterdir() if p.name.endswith((".tmp", ".trash"))]
    except OSError:
        return
    for path in leftovers:
        try:
            if path.stat().st_mtime >= cutoff:
                continue
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink()
        except OSError:
            pass


def write_entry(folder: Path, kind: str, fill: Callable[[Path], None], manifest: Mapping[str, Any]) -> bool:
    """Write an entry: `fill` writes its files into a temporary folder, the manifest goes last, one rename commits.

    False when another writer's complete entry is already in place (this copy is then dropped).
    """
    folder.parent.mkdir(parents=True, exist_ok=True)
    sweep_stale(folder.parent)
    tmp = _tmp_name(folder, "")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        fill(tmp)
        files = {p.name: file_sha256(p) for p in sorted(tmp.iterdir()) if p.is_file()}
        record = {**manifest, "format": ENTRY_FORMAT, "kind": kind, "files": files, "created": _now()}
        staged = tmp / (MANIFEST + ".tmp")
        staged.write_text(json.dumps(record, indent=2, default=str))
        staged.replace(tmp / MANIFEST)
        try:
            tmp.rename(folder)  # fails when a (non-empty) entry is already there
        except OSError:
            return False
        return True
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def file_sha256(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_entry(folder: Path, kind: str) -> tuple[dict, dict[str, bytes]] | None:
    """The manifest and the checksum-verified bytes of every file it lists; None when there is no entry.

    Raises DamagedEntry when the manifest is missing or invalid, or a file is missing or differs.
    """
    try:
        text = (folder / MANIFEST).read_text(encoding="utf-8")
    except FileNotFoundError:
        if not folder.is_dir():
            return None
        raise DamagedEntry("no manifest") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DamagedEntry(f"unreadable manifest ({exc})") from None
    manifest = parse_manifest(text, kind)
    data = {}
    for name in manifest["files"]:
        blob = read_verified(folder, manifest, name)
        if blob is None:
            return None
        data[name] = blob
    return manifest, data


def read_verified(folder: Path, manifest: Mapping[str, Any], name: str) -> bytes | None:
    """One file of an entry, checked against the manifest's checksum; None when the entry has vanished."""
    try:
        blob = (folder / name).read_bytes()
    except FileNotFoundError:
        if not folder.is_dir():
            return None  # moved away by another process while being read: as if never seen
        raise DamagedEntry(f"{name} is missing") from None
    except OSError as exc:
        raise DamagedEntry(f"{name} is unreadable ({exc})") from None
    if hashlib.sha256(blob).hexdigest() != manifest["files"].get(name):
        raise DamagedEntry(f"{name} does not match its checksum")
    return blob


def parse_manifest(text: str, kind: str) -> dict:
    """A manifest's fields, checked for format, kind and a plain list of files; DamagedEntry otherwise."""
    try:
        manifest = json.loads(text)
    except ValueError:
        raise DamagedEntry("the manifest is not JSON") from None
    if not isinstance(manifest, dict) or manifest.get("format") != ENTRY_FORMAT or manifest.get("kind") != kind:
        raise DamagedEntry(f"the manifest is not a format-{ENTRY_FORMAT} {kind} manifest")
    files = manifest.get("files")
    if not isinstance(files, dict) or not all(
            isinstance(n, str) and isinstance(d, str) and n == Path(n).name and n != MANIFEST for n, d in files.items()):
        raise DamagedEntry("the manifest's file list is invalid")
    return manifest


def discard(folder: Path, why: str, *, warn: bool = True) -> None:
    """Move a cache entry aside (one rename, so readers see it whole or gone) and delete it."""
    if warn:
        logger.warning("cache entry %s is damaged (%s): discarded, it is built again", folder, why)
    trash = folder.with_name(f"{folder.name}.{os.getpid()}.{threading.get_ident()}.trash")
    try:
        folder.rename(trash)
    except OSError:  # already gone: another process discarded or replaced it
        return
    shutil.rmtree(trash, ignore_errors=True)


def unit_rows(vectors: np.ndarray, tol: float = 1e-3) -> bool:
    """Whether every row is finite with norm 1 within `tol` (or exactly 0: an encoder's nothing-to-encode)."""
    if not np.isfinite(vectors).all():
        return False
    sq = np.einsum("ij,ij->i", vectors, vectors)
    return bool(np.all((np.abs(sq - 1.0) <= 2 * tol) | (sq == 0.0)))


@dataclass(frozen=True)
class IndexCache:
    """Where one FAISS index over one ordered list of chunk vectors lives."""

    folder: Path
    parts: Mapping[str, Any]

    @classmethod
    def at(cls, root: Path, build: BuildConfig, model_identity: str, chunks_digest: str) -> "IndexCache":
        """The entry for this model, these chunk texts in this order, and this index type and parameters."""
        parts = {**build.index_key_parts(), "model": model_identity, "chunks": chunks_digest, "v": INDEX_FORMAT}
        return cls(root / f"index-{cache_key(parts)}", parts)

    def load(self, n_chunks: int, dimension: int):
        """The cached index, checked (checksum, ntotal, d, type); None when missing or damaged (then logged)."""
        from labeler.retrieval.index import deserialize_index

        try:
            entry = read_entry(self.folder, "faiss")
            if entry is None:
                return None
            manifest, data = entry
            if manifest.get("parts") != json.loads(json.dumps(self.parts, default=str)):
                raise DamagedEntry("its manifest names other build parameters")
            try:
                index = deserialize_index(data.get("index.faiss", b""))
            except RuntimeError as exc:
                raise DamagedEntry(f"FAISS cannot read it ({str(exc).splitlines()[0][:120]})") from None
            if (index.ntotal, index.d) != (n_chunks, dimension) or (manifest.get("ntotal"), manifest.get("d")) != (
                    n_chunks, dimension):
                raise DamagedEntry(f"{index.ntotal} vectors of dimension {index.d}, expected {n_chunks} of {dimension}")
            return index
        except DamagedEntry as exc:
            discard(self.folder, str(exc))
            return None

    def save(self, index) -> None:
        """Write the index as an entry (a racing writer's identical copy may win)."""
        from labeler.retrieval.index import serialize_index

        data = serialize_index(index)
        write_entry(self.folder, "faiss", lambda tmp: (tmp / "index.faiss").write_bytes(data),
                    {"parts": self.parts, "ntotal": int(index.ntotal), "d": int(index.d),
                     "dtype": "float32", "shape": [int(index.ntotal), int(index.d)]})


def legacy_vectors(root: Path, build: BuildConfig, model_identity: str, fingerprint: str, n_chunks: int,
                   dimension: int | None) -> np.ndarray | None:
    """Vectors the pre-manifest cache (emb-<key>/vectors.npy) holds for this corpus, if whole and sane."""
    parts = {**build.embedding_key_parts(), "model": model_identity, "corpus": fingerprint, "v": CACHE_FORMAT}
    path = root / f"emb-{cache_key(parts)}" / "vectors.npy"
    if not path.is_file():
        return None
    try:
        vectors = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError):
        return None
    if (vectors.ndim != 2 or vectors.dtype != np.float32 or vectors.shape[0] != n_chunks
            or (dimension is not None and vectors.shape[1] != dimension) or not unit_rows(vectors)):
        return None
    return vectors


def bm25_folder(root: Path, build: BuildConfig, fingerprint: str) -> Path:
    """The BM25 cache folder: the chunk texts decide it, the embedding model does not."""
    return root / f"bm25-{cache_key({**build.embedding_key_parts(), 'model': None, 'corpus': fingerprint, 'v': BM25_FORMAT})}"


def load_bm25(folder: Path, n_chunks: int | None = None):
    """The cached BM25 index, checked against its manifest; None when missing or damaged (then logged)."""
    from labeler.retrieval.lexical import BM25Index

    try:
        entry = read_entry(folder, "bm25")
        if entry is None:
            return None
        manifest, _ = entry
        try:
            index = BM25Index.load(folder)
        except Exception as exc:  # bm25s raises what numpy, json or scipy raise on a bad file
            raise DamagedEntry(f"bm25s cannot read it ({type(exc).__name__})") from None
        count = _bm25_count(index)
        if manifest.get("count") != count or (n_chunks is not None and count != n_chunks):
            raise DamagedEntry(f"it indexes {count} texts, expected {n_chunks}")
        return index
    except DamagedEntry as exc:
        discard(folder, str(exc))
        return None


def save_bm25(index, folder: Path) -> None:
    """Write a BM25 index as an entry (a racing writer's identical copy may win)."""
    write_entry(folder, "bm25", index.save, {"count": _bm25_count(index)})


def _bm25_count(index) -> int:
    # How many texts a bm25s model indexes; BM25Index has no public count.
    return int(index._model.scores["num_docs"])
