"""Where the data directory is: `$LABELER_HOME`, else `.labeler/` in the working directory."""
from __future__ import annotations

import os
from pathlib import Path

_HERE = Path(__file__).resolve().parent
# A checkout's top-level sample_corpus/; an installed wheel carries the same files as labeler/sample_corpus/.
SAMPLE_CORPUS = next((p for p in (_HERE.parent / "sample_corpus", _HERE / "sample_corpus") if p.is_dir()),
                     _HERE.parent / "sample_corpus")


def labeler_home() -> Path:
    """The data directory (created on first use)."""
    home = Path(os.environ.get("LABELER_HOME") or Path.cwd() / ".labeler").expanduser()
    home.mkdir(parents=True, exist_ok=True)
    return home


def cache_dir() -> Path:
    """Embedding, FAISS and BM25 caches live here."""
    path = labeler_home() / "cache"
    path.mkdir(parents=True, exist_ok=True)
    return path
