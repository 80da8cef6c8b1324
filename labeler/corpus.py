"""Corpus loading: JSONL, CSV, a folder of .txt/.md files, or a BEIR folder.

Every loader is a pure parser over text (`parse_jsonl_corpus`, `parse_csv_corpus`) plus a thin
file wrapper, so tests can inline their data. Bad input raises `CorpusError` naming the file,
the line and the fix; nothing is half-loaded.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Any

from labeler.errors import CorpusError

ID_KEYS = ("doc_id", "_id", "id")
TEXT_SUFFIXES = (".txt", ".md")


@dataclass(frozen=True)
class Document:
    """One judged unit: documents, not chunks, are labelled and scored."""

    doc_id: str
    title: str
    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Frozen all the way down: a cached corpus is shared by every session.
        object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))


@dataclass(frozen=True)
class Corpus:
    """An ordered, id-unique collection of documents with a content fingerprint."""

    documents: tuple[Document, ...]
    source: str = ""
    empty: tuple[str, ...] = ()  # ids of documents with neither title nor text (kept; BEIR collections only)

    @cached_property
    def fingerprint(self) -> str:
        """`sha256:<hex>` over ids, titles, texts and metadata, independent of file order."""
        h = hashlib.sha256()
        for doc in sorted(self.documents, key=lambda d: d.doc_id):
            record = [doc.doc_id, doc.title, doc.text, dict(doc.metadata)]
            h.update(json.dumps(record, ensure_ascii=False, sort_keys=True, default=str).encode())
            h.update(b"\n")
        return "sha256:" + h.hexdigest()

    @cached_property
    def _by_id(self) -> dict[str, Document]:
        return {d.doc_id: d for d in self.documents}

    def __len__(self) -> int:
        return len(self.documents)

    def __iter__(self):
        return iter(self.documents)

    def get(self, doc_id: str) -> Document | None:
        """The document with this id, or None."""
        return self._by_id.get(doc_id)

    def doc_ids(self) -> frozenset[str]:
        """Every document id."""
        return frozenset(self._by_id)

    def metadata_values(self) -> dict[str, list[str]]:
        """Metadata key -> sorted distinct values (as strings), for filter pickers."""
        values: dict[str, set[str]] = {}
        for doc in self.documents:
            for key, value in doc.metadata.items():
                if isinstance(value, (str, int, float, bool)):
                    values.setdefault(key, set()).add(str(value))
        return {k: sorted(v) for k, v in sorted(values.items())}


def _decode(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise CorpusError(
            f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})",
            path=path, line=line,
            hint="re-save the file as UTF-8 (e.g. `iconv -f latin1 -t utf-8 in > out`).",
        ) from None


def _build(docs: Iterable[tuple[Document, int]], source: str) -> Corpus:
    seen: dict[str, int] = {}
    out: list[Document] = []
    for doc, line in docs:
        if doc.doc_id in seen:
            raise CorpusError(
                f"duplicate document id {doc.doc_id!r} (first seen on line {seen[doc.doc_id]})",
                path=source, line=line, hint="give every document a unique id.",
            )
        seen[doc.doc_id] = line
        out.append(doc)
    if not out:
        raise CorpusError("the corpus is empty: no documents found", path=source,
                          hint="add at least one document with an id and non-empty text.")
    return Corpus(tuple(out), source=source)


def _check_text(doc_id: str, text: Any, source: str, line: int) -> str:
    if not isinstance(text, str):
        raise CorpusError(f"document {doc_id!r}: 'text' must be a string, got {type(text).__name__}",
                          path=source, line=line, hint="store the document body as a JSON string.")
    if not text.strip():
        raise CorpusError(f"document {doc_id!r} has empty text", path=source, line=line,
                          hint="remove the document or give it text.")
    return text


def parse_jsonl_corpus(text: str, *, source: str = "<string>", allow_empty: bool = False) -> Corpus:
    """Parse JSONL: one object per line with an id (`doc_id`, `_id` or `id`), `text`, optional
    `title` and `metadata`; any other field is kept as metadata.

    With `allow_empty`, a document with empty text is kept instead of being an error (ids of those
    with neither title nor text are listed in `Corpus.empty`).
    """
    empty: list[str] = []

    def docs():
        # split on "\n" only: JSON strings may hold U+2028, which splitlines() would cut at.
        for n, raw in enumerate(text.split("\n"), start=1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise CorpusError(f"broken JSON ({exc.msg} at column {exc.colno})", path=source,
                                  line=n, hint="each line must be one complete JSON object.") from None
            if not isinstance(obj, dict):
                raise CorpusError(f"expected a JSON object, got {type(obj).__name__}", path=source,
                                  line=n, hint='write {"doc_id": ..., "title": ..., "text": ...}.')
            key = next((k for k in ID_KEYS if k in obj), None)
            if key is None:
                raise CorpusError("missing document id", path=source, line=n,
                                  hint="add a 'doc_id' (or '_id' / 'id') field.")
            doc_id = obj.pop(key)
            if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)) or not str(doc_id).strip():
                raise CorpusError(f"document id must be a non-empty string, got {doc_id!r}",
                                  path=source, line=n, hint="use a string id such as \"doc-1\".")
            doc_id = str(doc_id)
            if "text" not in obj:
                raise CorpusError(f"document {doc_id!r} has no 'text' field", path=source, line=n,
                                  hint="add the document body as 'text'.")
            title = obj.pop("title", "") or ""
            if not isinstance(title, str):
                raise CorpusError(f"document {doc_id!r}: 'title' must be a string", path=source,
                                  line=n, hint="store the title as a JSON string.")
            body = obj.pop("text")
            if allow_empty and isinstance(body, str):
                if not body.strip() and not title.strip():
                    empty.append(doc_id)
            else:
                body = _check_text(doc_id, body, source, n)
            metadata = obj.pop("metadata", None) or {}
            if not isinstance(metadata, dict):
                raise CorpusError(f"document {doc_id!r}: 'metadata' must be an object", path=source,
                                  line=n, hint='write "metadata": {"section": "travel"}.')
            for other in ID_KEYS:  # a second id-like key is metadata, not an error
                obj.pop(other, None)
            yield Document(doc_id, title, body, {**obj, **metadata}), n

    corpus = _build(docs(), source)
    return Corpus(corpus.documents, source=source, empty=tuple(empty)) if empty else corpus


def parse_csv_corpus(text: str, *, source: str = "<string>") -> Corpus:
    """Parse CSV with a header: an id column (`id`, `doc_id` or `_id`), `text`, optional `title`;
    extra columns become metadata."""
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = reader.fieldnames or []
    id_col = next((k for k in ID_KEYS if k in header), None)
    missing = [name for name, ok in (("id", id_col), ("text", "text" in header)) if not ok]
    if missing:
        raise CorpusError(f"missing column(s) {', '.join(missing)}; header is {header}",
                          path=source, line=1, hint="the first row must name the columns: id,title,text,...")

    def docs():
        for row in reader:
            n = reader.line_num
            if None in row:
                raise CorpusError("more fields than the header has columns", path=source, line=n,
                                  hint="quote fields that contain commas.")
            doc_id = (row.pop(id_col) or "").strip()
            if not doc_id:
                raise CorpusError("empty document id", path=source, line=n,
                                  hint="give every row an id.")
            body = _check_text(doc_id, row.pop("text") or "", source, n)
            title = row.pop("title", "") or ""
            meta = {k: v for k, v in row.items() if k not in ID_KEYS and v not in (None, "")}
            yield Document(doc_id, title, body, meta), n

    return _build(docs(), source)


def _title_from_text(path: Path, body: str) -> str:
    for raw in body.splitlines():
        line = raw.strip()
        if line:
            return line.lstrip("#").strip() if line.startswith("#") else path.stem
    return path.stem


def load_text_folder(folder: Path) -> Corpus:
    """A folder of .txt/.md files: id = path relative to the folder, title = first heading or name."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in TEXT_SUFFIXES
                   and not any(part.startswith(".") for part in p.relative_to(folder).parts))

    def docs():
        for p in files:
            rel = p.relative_to(folder).as_posix()
            body = _decode(p.read_bytes(), str(p))
            yield Document(rel, _title_from_text(p, body), _check_text(rel, body, str(p), 1),
                           {"path": rel}), 1

    if not files:
        raise CorpusError("the folder holds no .txt or .md files and no corpus.jsonl", path=str(folder),
                          hint="point at a JSONL/CSV file, a BEIR folder, or a folder of .txt/.md files.")
    return _build(docs(), str(folder))


def load_corpus(path: str | Path) -> Corpus:
    """Load a corpus from a JSONL file, a CSV file, a BEIR folder (corpus.jsonl) or a text folder."""
    p = Path(path).expanduser()
    if not p.exists():
        raise CorpusError("no such file or folder", path=str(p),
                          hint="check the path; the bundled corpus is `sample_corpus`.")
    if p.is_dir():
        beir = p / "corpus.jsonl"
        if beir.is_file():
            # A BEIR collection is reference data the user cannot fix (Cranfield has two
            # documents with neither title nor text). Keep them, so collection statistics
            # (BM25's N and average length) are the collection's own, and say so.
            return parse_jsonl_corpus(_decode(beir.read_bytes(), str(beir)), source=str(beir), allow_empty=True)
        return load_text_folder(p)
    data = p.read_bytes()
    text = _decode(data, str(p))
    suffix = p.suffix.lower()
    if suffix in (".jsonl", ".json", ".ndjson"):
        return parse_jsonl_corpus(text, source=str(p))
    if suffix in (".csv", ".tsv"):
        if suffix == ".tsv":
            raise CorpusError("TSV corpora are not supported", path=str(p), hint="convert it to CSV or JSONL.")
        return parse_csv_corpus(text, source=str(p))
    if suffix in TEXT_SUFFIXES:
        return _build([(Document(p.name, _title_from_text(p, text), _check_text(p.name, text, str(p), 1),
                                 {"path": p.name}), 1)], str(p))
    raise CorpusError(f"unknown corpus file type {suffix or '(none)'}", path=str(p),
                      hint="use .jsonl, .csv, a folder of .txt/.md files, or a BEIR folder.")
