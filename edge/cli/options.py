"""The run-config options shared by `index`, `search` and `eval`: one place, one RunConfig.

`index` and `search` take the build and search options; `eval` also the abstention threshold.
"""
from __future__ import annotations

import click

from labeler.config import CHUNK_UNITS, CHUNKINGS, DEFAULT_MODEL, INDEX_TYPES, MODES, RunConfig, parse_filters

_DEFAULTS = RunConfig()

_OPTIONS = [
    click.option("--model", default=DEFAULT_MODEL, show_default=True,
                 help="sentence-transformers model: the packaged default, a local path or a cached hub name."),
    click.option("--template", default=_DEFAULTS.template, show_default=True,
                 help="How a chunk is turned into text to embed; {title} and {text} are filled in."),
    click.option("--chunking", type=click.Choice(CHUNKINGS), default=_DEFAULTS.chunking, show_default=True),
    click.option("--chunk-size", type=int, default=_DEFAULTS.chunk_size, show_default=True),
    click.option("--chunk-overlap", type=int, default=_DEFAULTS.chunk_overlap, show_default=True),
    click.option("--chunk-unit", type=click.Choice(CHUNK_UNITS), default=_DEFAULTS.chunk_unit, show_default=True),
    click.option("--index", "index_type", type=click.Choice(INDEX_TYPES), default=_DEFAULTS.index, show_default=True),
    click.option("--hnsw-m", type=int, default=_DEFAULTS.hnsw_m, show_default=True),
    click.option("--ef-construction", type=int, default=_DEFAULTS.ef_construction, show_default=True),
    click.option("--ef-search", type=int, default=_DEFAULTS.ef_search, show_default=True),
    click.option("--nlist", type=int, default=_DEFAULTS.nlist, show_default=True),
    click.option("--nprobe", type=int, default=_DEFAULTS.nprobe, show_default=True),
    click.option("--filter", "filters", multiple=True, metavar="KEY=VALUE",
                 help="Metadata filter, repeatable (same key: OR; different keys: AND)."),
    click.option("--mode", type=click.Choice(MODES), default=_DEFAULTS.mode, show_default=True,
                 help="Retrieval mode: dense (FAISS), bm25, or hybrid (reciprocal-rank fusion of both)."),
    click.option("--retriever", type=click.Choice(MODES), default=None, hidden=True, help="Old name of --mode."),
    click.option("--hybrid", is_flag=True, help="Shorthand for --mode hybrid."),
    click.option("--rrf-k", type=int, default=_DEFAULTS.rrf_k, show_default=True),
    click.option("--rerank", "reranker", default=None, metavar="PATH", help="CrossEncoder model folder to rerank with."),
    click.option("--rerank-top", type=int, default=_DEFAULTS.rerank_top, show_default=True),
]
# Evaluation, not search: reported for the run (abstain when the top score is below it).
_ABSTAIN = click.option("--abstain-threshold", type=float, default=None,
                        help="Score abstention at this threshold: a question whose top score is below it "
                             "counts as answered with nothing.")


def retrieval_options(fn):
    """Add the build and search options of RunConfig (not the abstention threshold) to a click command."""
    for option in reversed(_OPTIONS):
        fn = option(fn)
    return fn


def config_options(fn):
    """Add every RunConfig option, the abstention threshold included, to a click command (`eval`)."""
    return retrieval_options(_ABSTAIN(fn))


_KEYS = ("model", "template", "chunking", "chunk_size", "chunk_overlap", "chunk_unit", "index_type", "hnsw_m",
         "ef_construction", "ef_search", "nlist", "nprobe", "filters", "mode", "retriever", "hybrid", "rrf_k", "reranker",
         "rerank_top", "abstain_threshold")


PIPELINE_ONLY = frozenset(_KEYS) - {"abstain_threshold"}  # what another system (eval --system) has no use for


def config_from_options(kwargs: dict, *, k: int | None = None) -> RunConfig:
    """Pop the config options out of a command's kwargs and build the RunConfig."""
    o = {key: kwargs.pop(key) for key in _KEYS if key in kwargs}
    old, mode = o.pop("retriever", None), o.pop("mode", _DEFAULTS.mode)
    mode = "hybrid" if o.pop("hybrid", False) else old or mode
    extra = {"k": k} if k is not None else {}
    return RunConfig(index=o.pop("index_type", "flat"), filters=parse_filters(o.pop("filters", ())),
                     mode=mode, **o, **extra)
