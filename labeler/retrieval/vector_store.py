"""The vector store: one folder per model holding chunk vectors keyed by the sha256 of the text embedded.

A vector depends on the model and the exact text given to it (the template already rendered),
nothing else, so that is the whole key: editing one document re-embeds its chunks only, and a
text two chunks or two corpora share is embedded once. The store is append-only shards (see
`labeler.retrieval.cache` for the entry format), each `vectors.npy` (float32, n x dim),
`keys.npy` (uint8, n x 32: the text hashes) and a manifest written last. A lookup reads every
shard's keys (32 bytes a vector), matches them in numpy, and reads, checks and gathers vectors
from the shards that hold a wanted key only. Many small shards are merged into one
(`COMPACT_AT`); duplicates two racing writers leave are harmless and merged away.

`model.json` records the model's dimension, so a fully cached open need not load the model to
check shards against it; when the record and a shard disagree, the model itself decides.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from labeler.retrieval.cache import (DamagedEntry, cache_key, discard, logger, parse_manifest, read_verified,
                                     unit_rows, write_entry)

STORE_FORMAT = 1
COMPACT_AT = 8  # more shards than this: merge the small ones
_KIND = "vector-shard"
_KEY = np.dtype("S32")  # a sha256 digest; numpy compares and sorts it bytewise


def text_keys(texts: Sequence[str]) -> np.ndarray:
    """The store key of each text: its sha256 digest, as an array of 32-byte strings."""
    # surrogatepass: a JSON corpus may hold a lone surrogate escape; it still has one key.
    digests = b"".join(hashlib.sha256(t.encode("utf-8", "surrogatepass")).digest() for t in texts)
    return np.frombuffer(digests, dtype=_KEY)


def keys_digest(keys: np.ndarray) -> str:
    """32 hex digits naming an ordered list of text keys (what a FAISS index over them holds)."""
    return hashlib.sha256(np.ascontiguousarray(keys, dtype=_KEY).tobytes()).hexdigest()[:32]


class _Retry(Exception):
    """The shard list changed under a lookup (a shard vanished or was discarded): list again."""


class VectorStore:
    """The chunk vectors one model produced, keyed by text hash, shared by every corpus."""

    def __init__(self, folder: Path, model_identity: str) -> None:
        self.folder = folder
        self.model_identity = model_identity

    @classmethod
    def at(cls, root: Path, model_identity: str) -> "VectorStore":
        """The store of this model under the cache root."""
        return cls(root / f"vectors-{cache_key({'model': model_identity, 'v': STORE_FORMAT})}", model_identity)

    # -- the dimension record ---------------------------------------------------------------
    def recorded_dimension(self, *, warn: bool = True) -> int | None:
        """The model's dimension as model.json records it; None when missing or unreadable (then logged)."""
        path = self.folder / "model.json"
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            record, problem = None, type(exc).__name__
        else:
            problem = "no dimension for this model"
        dim = record.get("dim") if isinstance(record, dict) and record.get("model") == self.model_identity else None
        if isinstance(dim, int) and dim > 0:
            return dim
        if warn:
            logger.warning("cache file %s is damaged (%s): the model decides the dimension", path, problem)
        return None

    def record_dimension(self, dim: int) -> None:
        """Write model.json (atomically) unless it already says `dim`."""
        if self.recorded_dimension(warn=False) == dim:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / "model.json"
        tmp = path.with_name(f"model.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps({"format": STORE_FORMAT, "model": self.model_identity, "dim": dim}))
        tmp.replace(path)

    # -- reading ------------------------------------------------------------------------------
    def _shard_folders(self) -> list[Path]:
        try:
            return sorted(p for p in self.folder.iterdir() if p.name.startswith("shard-") and "." not in p.name)
        except FileNotFoundError:
            return []

    def _manifests(self) -> list[tuple[Path, dict]]:
        out = []
        for folder in self._shard_folders():
            try:
                manifest = parse_manifest((folder / "manifest.json").read_text(encoding="utf-8"), _KIND)
                shape = manifest.get("shape")
                if (manifest.get("model") != self.model_identity or manifest.get("dtype") != "float32"
                        or not (isinstance(shape, list) and len(shape) == 2 and all(isinstance(x, int) for x in shape))
                        or shape[0] != manifest.get("count") or shape[1] != manifest.get("dim")
                        or set(manifest["files"]) != {"vectors.npy", "keys.npy"}):
                    raise DamagedEntry("its manifest does not describe a shard of this model")
            except FileNotFoundError:
                if not folder.is_dir():
                    continue  # merged away or discarded since it was listed
                discard(folder, "no manifest")
                continue
            except (OSError, UnicodeDecodeError, DamagedEntry) as exc:
                discard(folder, str(exc) if isinstance(exc, DamagedEntry) else f"unreadable manifest ({exc})")
                continue
            out.append((folder, manifest))
        return out

    def _dimension(self, manifests: list[tuple[Path, dict]], loaded: bool, model_dimension: Callable[[], int]) -> int:
        if loaded:
            return model_dimension()
        recorded = self.recorded_dimension()
        if recorded is not None and all(m["dim"] == recorded for _, m in manifests):
            return recorded
        dim = model_dimension()  # the record is missing or a shard disagrees: ask the model
        if recorded is not None and recorded != dim:
            logger.warning("cache file %s says dimension %d, the model's is %d: rewritten",
                           self.folder / "model.json", recorded, dim)
        self.record_dimension(dim)
        return dim

    def _read(self, folder: Path, manifest: dict, name: str, dim: int) -> np.ndarray:
        blob = read_verified(folder, manifest, name)
        if blob is None:
            raise _Retry
        try:
            array = np.load(io.BytesIO(blob), allow_pickle=False)
        except (ValueError, EOFError, OSError) as exc:
            raise DamagedEntry(f"{name} is not a numpy array ({exc})") from None
        if name == "keys.npy":
            if array.dtype != np.uint8 or array.shape != (manifest["count"], 32):
                raise DamagedEntry(f"keys.npy holds {array.dtype} {array.shape}, expected uint8 ({manifest['count']}, 32)")
            return np.ascontiguousarray(array).view(_KEY).reshape(-1)
        if array.dtype != np.float32 or array.shape != (manifest["count"], dim):
            raise DamagedEntry(f"vectors.npy holds {array.dtype} {array.shape}, expected float32 "
                               f"({manifest['count']}, {dim})")
        if not unit_rows(array):
            raise DamagedEntry("vectors.npy holds vectors that are not finite and of unit length")
        return array

    def lookup(self, keys: np.ndarray, *, model_dimension: Callable[[], int],
               loaded: bool = False) -> tuple[np.ndarray | None, np.ndarray]:
        """(vectors, found): found[i] says whether keys[i] is stored; vectors (n x dim) holds it where found.

        `model_dimension()` is the model's own answer (it may load the model); with `loaded` it is
        cheap and always asked, otherwise model.json stands in for it while every shard agrees.
        Damaged shards are logged and discarded (their keys are then not found), never used.
        """
        for _ in range(len(self._shard_folders()) + 3):
            try:
                return self._lookup_once(keys, model_dimension, loaded)
            except _Retry:
                continue
        return None, np.zeros(len(keys), dtype=bool)  # the store keeps changing under us: embed instead

    def _lookup_once(self, keys: np.ndarray, model_dimension: Callable[[], int],
                     loaded: bool) -> tuple[np.ndarray | None, np.ndarray]:
        manifests = self._manifests()
        if not manifests:
            return None, np.zeros(len(keys), dtype=bool)
        dim = self._dimension(manifests, loaded, model_dimension)
        shards, stored = [], []
        for folder, manifest in manifests:
            try:
                if manifest["dim"] != dim:
                    raise DamagedEntry(f"vectors of dimension {manifest['dim']}; the model's is {dim}")
                stored.append(self._read(folder, manifest, "keys.npy", dim))
                shards.append((folder, manifest))
            except DamagedEntry as exc:
                discard(folder, str(exc))
        if not shards:
            return None, np.zeros(len(keys), dtype=bool)
        all_keys = np.concatenate(stored)
        owner = np.repeat(np.arange(len(stored)), [len(k) for k in stored])
        row = np.concatenate([np.arange(len(k)) for k in stored])
        order = np.argsort(all_keys, kind="stable")
        sorted_keys = all_keys[order]
        pos = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
        found = sorted_keys[pos] == keys
        source = order[pos[found]]
        vectors = np.zeros((len(keys), dim), dtype=np.float32)
        wanted = np.flatnonzero(found)
        for s in np.unique(owner[source]).tolist():
            folder, manifest = shards[s]
            try:
                shard_vectors = self._read(folder, manifest, "vectors.npy", dim)
            except DamagedEntry as exc:
                discard(folder, str(exc))
                raise _Retry from None
            mine = owner[source] == s
            vectors[wanted[mine]] = shard_vectors[row[source[mine]]]
        return vectors, found

    # -- writing ------------------------------------------------------------------------------
    def add(self, keys: np.ndarray, vectors: np.ndarray) -> None:
        """Store vectors under their text keys as one new shard (keys unique; vectors checked first)."""
        if len(keys) == 0:
            return
        if not unit_rows(vectors):
            logger.warning("the model returned vectors that are not finite and of unit length: not cached")
            return
        self.record_dimension(int(vectors.shape[1]))
        self._write_shard(keys, vectors)
        self.compact()

    def _write_shard(self, keys: np.ndarray, vectors: np.ndarray) -> None:
        name = f"shard-{time.time_ns():016x}-{os.getpid()}-{threading.get_ident()}-{secrets.token_hex(4)}"
        keys = np.ascontiguousarray(keys, dtype=_KEY)
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)

        def fill(tmp: Path) -> None:
            np.save(tmp / "vectors.npy", vectors, allow_pickle=False)
            np.save(tmp / "keys.npy", keys.view(np.uint8).reshape(-1, 32), allow_pickle=False)

        n, dim = vectors.shape
        write_entry(self.folder / name, _KIND, fill, {"model": self.model_identity, "dtype": "float32",
                                                      "shape": [n, dim], "count": n, "dim": dim})

    def compact(self) -> None:
        """With more than COMPACT_AT shards, merge all but the largest (or all, when the rest outweigh it)."""
        manifests = self._manifests()
        if len(manifests) <= COMPACT_AT:
            return
        dims = {m["dim"] for _, m in manifests}
        if len(dims) != 1:
            return  # a lookup settles which dimension is right first
        dim = dims.pop()
        manifests.sort(key=lambda fm: fm[1]["count"])
        if sum(m["count"] for _, m in manifests[:-1]) < manifests[-1][1]["count"]:
            manifests = manifests[:-1]
        keys, vectors = [], []
        try:
            for folder, manifest in manifests:
                keys.append(self._read(folder, manifest, "keys.npy", dim))
                vectors.append(self._read(folder, manifest, "vectors.npy", dim))
        except (_Retry, DamagedEntry):
            return  # another process is at work here, or a shard is damaged: the next lookup sorts it out
        merged_keys, first = np.unique(np.concatenate(keys), return_index=True)
        self._write_shard(merged_keys, np.concatenate(vectors)[first])
        for folder, _ in manifests:
            discard(folder, "merged", warn=False)
