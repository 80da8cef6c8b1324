"""Golden Set Labeler core: corpus, chunking, embedding, retrieval, golden sets, metrics.

Never imports streamlit. Heavy libraries (torch, faiss, bm25s) are imported where used.
"""
import os

# THE place offline mode is set: the packaged model loads from site-packages and nothing may
# download at run time. setdefault, so a user who means to fetch a hub model can say so.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from labeler.errors import LabelerError  # noqa: E402

__all__ = ["LabelerError"]
__version__ = "0.1.0"
