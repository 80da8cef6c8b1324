"""Corpus loading: JSONL, CSV, a folder of .txt/.md files, or a BEIR folder.

Every loader is a pure parser over text (`parse_jsonl_corpus`, `parse_csv_corpus`) plus a thin
file wrapper, so tests can inline their data. Bad input raises `CorpusError` naming the file,
the line and the fix; nothing is half-loaded. JSON lines are read by `labeler.jsonlines` (strict
JSON, UTF-8 per line); document ids follow `labeler.ids` (a JSON integer id becomes its string;
a CSV id cell's surrounding spaces are padding and dropped). A text folder's ids are the files'
relative paths, percent-encoded where the id policy requires (`labeler.ids.path_to_doc_id`).

Loading is bounded on request (`load_corpus(path, max_bytes=, max_documents=, max_entries=,
within=)`, see `labeler.file_guard`): a web page that opens a path a user typed sets them; the CLI,
reading the user's own files, leaves them unset. Only regular files are ever opened.
"""
from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from labeler.corpus.model import Corpus, Document
from labeler.errors import CorpusError
from labeler.file_guard import HINT_LIMIT, CappedReader, is_within, open_regular, read_capped, too_large, walk_files
from labeler.ids import ID_HINT, id_problem, path_to_doc_id
from labeler.jsonlines import HINT_ENCODING, BadLine, parse_json_lines, path_kind, read_json_lines, require_file

ID_KEYS = ("doc_id", "_id", "id")
TEXT_SUFFIXES = (".txt", ".md")
# A corpus line holds a whole document and the corpus is held in memory anyway: the limit only
# stops a file without line breaks (or a binary file) from being read as one line.
MAX_DOCUMENT_LINE_BYTES = 64 << 20


def _decode(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise CorpusError(f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})",
                          path=path, line=line, hint=HINT_ENCODING) from None


def _read_text(path: Path, max_bytes: int | None = None) -> str:
    return _decode(read_capped(path, max_bytes=max_bytes, error=CorpusError), str(path))


def _check_id(value: object, source: str, line: int, what: str = "document id") -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)  # BEIR collections write numeric ids
    if why := id_problem(value, what):
        raise CorpusError(why, path=source, line=line, hint=ID_HINT)
    return value  # type: ignore[return-value]


def _build(docs: Iterable[tuple[Document, int]], source: str, max_documents: int | None = None) -> Corpus:
    seen: dict[str, int] = {}
    out: list[Document] = []
    for doc, line in docs:
        if max_documents is not None and len(out) >= max_documents:
            raise CorpusError(f"the corpus holds more than {max_documents:,} documents", path=source, hint=HINT_LIMIT)
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


def _jsonl_corpus(values: Iterable[tuple[int, object]], source: str, allow_empty: bool,
                  max_documents: int | None = None) -> Corpus:
    empty: list[str] = []

    def docs() -> Iterator[tuple[Document, int]]:
        for n, obj in values:
            if isinstance(obj, BadLine):
                hint = {"encoding": HINT_ENCODING, "too_long": "split the document or store it as a text file.",
                        }.get(obj.kind, "each line must be one complete JSON object.")
                raise CorpusError(obj.reason, path=source, line=n, hint=hint)
            if not isinstance(obj, dict):
                raise CorpusError(f"expected a JSON object, got {type(obj).__name__}", path=source,
                                  line=n, hint='write {"doc_id": ..., "title": ..., "text": ...}.')
            key = next((k for k in ID_KEYS if k in obj), None)
            if key is None:
                raise CorpusError("missing document id", path=source, line=n,
                                  hint="add a 'doc_id' (or '_id' / 'id') field.")
            doc_id = _check_id(obj.pop(key), source, n)
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

    corpus = _build(docs(), source, max_documents)
    return Corpus(corpus.documents, source=source, empty=tuple(empty)) if empty else corpus


def parse_jsonl_corpus(text: str, *, source: str = "<string>", allow_empty: bool = False) -> Corpus:
    """Parse JSONL: one object per line with an id (`doc_id`, `_id` or `id`), `text`, optional
    `title` and `metadata`; any other field is kept as metadata.

    With `allow_empty`, a document with empty text is kept instead of being an error (ids of those
    with neither title nor text are listed in `Corpus.empty`).
    """
    return _jsonl_corpus(parse_json_lines(text, max_line_bytes=MAX_DOCUMENT_LINE_BYTES), source, allow_empty)


def read_jsonl_corpus(path: str | Path, *, allow_empty: bool = False, max_bytes: int | None = None,
                      max_documents: int | None = None) -> Corpus:
    """Read a JSONL corpus file line by line (see parse_jsonl_corpus), refusing a file past
    `max_bytes` before reading it and stopping past `max_documents`."""
    p = require_file(path, error=CorpusError)
    with open_regular(p, max_bytes=max_bytes, error=CorpusError) as f:
        values = read_json_lines(CappedReader(f, max_bytes, p, CorpusError), max_line_bytes=MAX_DOCUMENT_LINE_BYTES,
                                 error=CorpusError)
        try:
            return _jsonl_corpus(values, str(p), allow_empty, max_documents)
        except OSError as exc:  # a path can open and still fail to read (a dying disk)
            raise CorpusError(f"cannot read the file: {exc.strerror or exc}", path=p,
                              hint="give a readable regular file.") from None


def _csv_error(exc: csv.Error, source: str, line: int) -> CorpusError:
    if "field larger than field limit" in str(exc):
        limit = csv.field_size_limit()
        return CorpusError(f"a cell is longer than the csv module's limit of {limit:,} characters",
                           path=source, line=line, hint="store long documents in a JSONL corpus "
                                                        "(one JSON object per line), which has no cell limit.")
    return CorpusError(f"malformed CSV: {exc}", path=source, line=line,
                       hint="check the quoting of this row (a field with commas or line breaks goes in double quotes).")


def parse_csv_corpus(text: str, *, source: str = "<string>", max_documents: int | None = None) -> Corpus:
    """Parse CSV with a header: an id column (`id`, `doc_id` or `_id`), `text`, optional `title`;
    extra columns become metadata."""
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        header = reader.fieldnames or []
    except csv.Error as exc:
        raise _csv_error(exc, source, 1) from None
    id_col = next((k for k in ID_KEYS if k in header), None)
    missing = [name for name, ok in (("id", id_col), ("text", "text" in header)) if not ok]
    if missing:
        raise CorpusError(f"missing column(s) {', '.join(missing)}; header is {header}",
                          path=source, line=1, hint="the first row must name the columns: id,title,text,...")

    def rows() -> Iterator[tuple[int, dict]]:
        try:
            for row in reader:
                yield reader.line_num, row
        except csv.Error as exc:
            # line_num counts the lines of the rows read so far: the bad row starts on the next one.
            raise _csv_error(exc, source, reader.line_num + 1) from None

    def docs() -> Iterator[tuple[Document, int]]:
        for n, row in rows():
            if None in row:
                raise CorpusError("more fields than the header has columns", path=source, line=n,
                                  hint="quote fields that contain commas.")
            doc_id = (row.pop(id_col) or "").strip()
            if not doc_id:
                raise CorpusError("empty document id", path=source, line=n,
                                  hint="give every row an id.")
            doc_id = _check_id(doc_id, source, n)
            body = _check_text(doc_id, row.pop("text") or "", source, n)
            title = row.pop("title", "") or ""
            meta = {k: v for k, v in row.items() if k not in ID_KEYS and v not in (None, "")}
            yield Document(doc_id, title, body, meta), n

    return _build(docs(), source, max_documents)


def _title_from_text(path: Path, body: str) -> str:
    for raw in body.splitlines():
        line = raw.strip()
        if line:
            return line.lstrip("#").strip() if line.startswith("#") else path.stem
    return path.stem


def _text_document(path: Path, relative: str, max_bytes: int | None = None) -> Document:
    """One .txt/.md file as a document: id from its relative path (percent-encoded), title from its first line."""
    body = _read_text(path, max_bytes)
    doc_id = path_to_doc_id(relative)
    return Document(doc_id, _title_from_text(path, body), _check_text(doc_id, body, str(path), 1), {"path": relative})


def load_text_folder(folder: Path, *, max_bytes: int | None = None, max_documents: int | None = None,
                     max_entries: int | None = None, within: Path | None = None) -> Corpus:
    """A folder of .txt/.md files: id = relative path (percent-encoded, `labeler.ids.path_to_doc_id`),
    title = first heading or file name. Hidden files, pipes and devices are skipped, linked folders are
    not entered; `max_bytes` bounds the files' total size (checked before reading), `max_entries` the
    walk, and with `within` a linked file pointing outside that folder is skipped."""
    files = walk_files(folder, TEXT_SUFFIXES, max_entries=max_entries, max_files=max_documents, within=within,
                       error=CorpusError)
    if not files:
        raise CorpusError("the folder holds no .txt or .md files and no corpus.jsonl", path=str(folder),
                          hint="point at a JSONL/CSV file, a BEIR folder, or a folder of .txt/.md files.")
    if max_bytes is not None and _total_size(files) > max_bytes:
        raise too_large("the total size of the folder's .txt/.md files", max_bytes, folder, CorpusError)
    return _build(((_text_document(p, p.relative_to(folder).as_posix(), max_bytes), 1) for p in files), str(folder))


def _total_size(files: Iterable[Path]) -> int:
    total = 0
    for p in files:
        try:
            total += p.stat().st_size
        except OSError:  # gone since the walk: reading it will say so
            pass
    return total


def load_corpus(path: str | Path, *, max_bytes: int | None = None, max_documents: int | None = None,
                max_entries: int | None = None, within: Path | None = None) -> Corpus:
    """Load a corpus from a JSONL file, a CSV file, a BEIR folder (corpus.jsonl) or a text folder.

    Unset limits mean none. `max_bytes` caps a file (or a text folder's files together) and is
    checked before reading; `max_documents` stops a longer corpus; `max_entries` bounds a folder walk;
    `within` (a resolved folder) confines links: a file reached through one must lie under it.
    """
    p = Path(path).expanduser()
    kind = path_kind(p)
    if kind == "missing":
        raise CorpusError("no such file or folder", path=str(p),
                          hint="check the path: a relative one is read from the folder you are in (the bundled "
                               "`sample_corpus` folder is in the source checkout).")
    if kind == "other":  # reading a named pipe would wait for a writer forever
        raise CorpusError("not a regular file or folder (a pipe, socket or device)", path=str(p),
                          hint="give a corpus file or folder.")
    if within is not None and not is_within(p, within):
        raise CorpusError("the path leads outside the allowed folder", path=str(p), hint="give a path inside it.")
    if kind == "folder":
        beir = p / "corpus.jsonl"
        if within is not None and not is_within(beir, within):
            raise CorpusError("corpus.jsonl is a link that leads outside the allowed folder", path=str(beir),
                              hint="copy the collection into the folder instead of linking it.")
        if path_kind(beir) == "file":
            # A BEIR collection is reference data the user cannot fix (Cranfield has two
            # documents with neither title nor text). Keep them, so collection statistics
            # (BM25's N and average length) are the collection's own, and say so.
            return read_jsonl_corpus(beir, allow_empty=True, max_bytes=max_bytes, max_documents=max_documents)
        return load_text_folder(p, max_bytes=max_bytes, max_documents=max_documents, max_entries=max_entries,
                                within=within)
    suffix = p.suffix.lower()
    if suffix in (".jsonl", ".json", ".ndjson"):
        return read_jsonl_corpus(p, max_bytes=max_bytes, max_documents=max_documents)
    if suffix == ".tsv":
        raise CorpusError("TSV corpora are not supported", path=str(p), hint="convert it to CSV or JSONL.")
    if suffix == ".csv":
        return parse_csv_corpus(_read_text(p, max_bytes), source=str(p), max_documents=max_documents)
    if suffix in TEXT_SUFFIXES:
        return _build([(_text_document(p, p.name, max_bytes), 1)], str(p))
    raise CorpusError(f"unknown corpus file type {suffix or '(none)'}", path=str(p),
                      hint="use .jsonl, .csv, a folder of .txt/.md files, or a BEIR folder.")
