"""The retrieval pipeline: chunks → cached embeddings → FAISS / BM25 → fusion → rerank → documents.

`retriever` builds and searches (from a BuildConfig; each search takes SearchParams), `cache`
keeps what it builds on disk, `fusion` is reciprocal-rank fusion, `rerank` the CrossEncoder
stage, `hits` the DocHit and the trec_eval ranking order they all end with.
"""
from labeler.config import BuildConfig, SearchParams
from labeler.retrieval.hits import DocHit
from labeler.retrieval.rerank import load_cross_encoder
from labeler.retrieval.retriever import OpenStats, Retriever, open_retriever, retrieve_run

__all__ = ["BuildConfig", "DocHit", "OpenStats", "Retriever", "SearchParams", "load_cross_encoder",
           "open_retriever", "retrieve_run"]
