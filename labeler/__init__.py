"""Golden Set Labeler core: corpus, chunking, embedding, retrieval, golden sets, metrics.

Never imports streamlit. Heavy libraries (torch, faiss, bm25s) are imported where used.
"""
from labeler.errors import LabelerError

__all__ = ["LabelerError"]
__version__ = "0.1.0"
