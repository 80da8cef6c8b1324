"""Corpus page: what is open (documents, chunks, model, index), the document browser, and opening
another corpus from an upload."""
from __future__ import annotations

import hashlib
import io
import os
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.workspace import normalize_corpus_path
from labeler.corpus import Corpus, load_corpus
from labeler.errors import CorpusError
from labeler.paths import labeler_home
from labeler.retrieval import Retriever

UPLOAD_SUFFIXES = (".jsonl", ".json", ".ndjson", ".csv", ".zip")


@dataclass(frozen=True)
class CorpusSummary:
    """The header of the Corpus page."""

    documents: int
    chunks: int
    model: str
    index: str
    source: str
    fingerprint: str
    cache: str


def corpus_summary(retriever: Retriever) -> CorpusSummary:
    """Document and chunk counts, model, index type, where the corpus came from and its cache."""
    info = retriever.info
    return CorpusSummary(documents=info["documents"], chunks=info["chunks"], model=info["model"], index=info["index"],
                         source=retriever.corpus.source, fingerprint=info["corpus_fingerprint"],
                         cache=str(info["cache"]))


def save_uploaded_corpus(name: str, data: bytes, *, home: Path | None = None) -> str:
    """Validate an uploaded corpus (JSONL, CSV, or a zip of .txt/.md files) and keep it.

    The file is checked in a temporary folder first; only a corpus that loads is moved under
    `<data dir>/corpora/`, so a bad upload leaves nothing behind. Returns the kept path.
    """
    safe = Path(name).name or "corpus"
    suffix = Path(safe).suffix.lower()
    if suffix not in UPLOAD_SUFFIXES:
        raise CorpusError(f"unknown corpus file type {suffix or '(none)'}", path=safe,
                          hint="upload a .jsonl or .csv file, or a .zip of .txt/.md files.")
    digest = hashlib.sha256(data).hexdigest()[:10]
    root = (home or labeler_home()) / "corpora"
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"{Path(safe).stem}-{digest}"
    with tempfile.TemporaryDirectory(dir=root, prefix=".upload-") as tmp:
        work = Path(tmp) / "corpus"
        work.mkdir()
        if suffix == ".zip":
            try:
                with zipfile.ZipFile(io.BytesIO(data)) as zf:
                    for member in zf.infolist():
                        target = (work / member.filename).resolve()
                        if not str(target).startswith(str(work.resolve()) + os.sep):
                            raise CorpusError(f"zip member {member.filename!r} points outside the archive",
                                              path=safe, hint="re-create the zip with relative paths.")
                    zf.extractall(work)
            except zipfile.BadZipFile:
                raise CorpusError("not a valid zip archive", path=safe,
                                  hint="upload a .zip of .txt/.md files, or a .jsonl/.csv file.") from None
            load_path = work
        else:
            load_path = work / safe
            load_path.write_bytes(data)
        try:
            load_corpus(load_path)
        except CorpusError as exc:  # name the uploaded file, not the temporary copy
            raise CorpusError(exc.message, path=safe, line=exc.line, hint=exc.hint) from None
        if not final.exists():
            shutil.move(str(work), str(final))
    return normalize_corpus_path(final if suffix == ".zip" else final / safe)


def browse_documents(corpus: Corpus, query: str, *, limit: int = 50) -> list[dict[str, Any]]:
    """Rows for the document browser: keyword/id search, or the first documents."""
    from labeler.candidates import keyword_search

    docs = keyword_search(corpus, query, limit=limit) if query.strip() else list(corpus.documents[:limit])
    return [{"doc_id": d.doc_id, "title": d.title, "chars": len(d.text),
             **{k: str(v) for k, v in d.metadata.items() if isinstance(v, (str, int, float, bool))}}
            for d in docs]


