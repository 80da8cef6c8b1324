"""Golden sets in and out of the database: the import and export use cases that the app's Golden
set page and `labeler import` / `labeler export` share.

An import reads and validates the whole file before the database is touched (a file with any
bad line imports nothing), classifies its questions against the collection (new, identical,
conflicting; labeler_storage.import_plan), then writes it in one transaction, conflicts only as the user
chose. An export serializes the collection's golden set in one of the three formats, as bytes
(for a download) or to a path (atomically); its JSONL carries each annotator's grades, votes,
adjudications and history beside the consensus, so importing it reproduces the collection.
"""
from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

from labeler.corpus import Corpus
from labeler.errors import InputError
from labeler.golden import (
    GoldenSet, read_golden, serialize_beir, serialize_golden_jsonl, serialize_trec_qrels, write_beir, write_golden,
    write_trec_qrels,
)

DEFAULT_COLLECTION = "default"
# A consensus-only file's grades count in the consensus by default, but only where no person graded the
# document: they never shift a grade people gave, and a file imported to score a system scores it.
COUNT_FILE_GRADES = True


def file_grades_line(plan: Any, count: bool) -> str:
    """What an import will do with a consensus-only file's grades, for its preview ("" when the file
    has none: an app export's grades are each annotator's and each source's own)."""
    if not plan.file_grades:
        return ""
    how = ("counted in the consensus where no person graded a document, never over a person's grade" if count
           else "kept apart: shown, but not counted in the consensus, the status or any metric until you count them")
    default = " (the default)" if count == COUNT_FILE_GRADES else ""
    return f"{plan.file_grades} grades of no annotator (a consensus-only file): kept as this file's own, {how}{default}."


class GoldenStore(Protocol):
    """What these use cases need of a store (storage.Store satisfies it)."""

    def get_collection(self, collection: str = ...) -> Any: ...
    def import_golden(self, golden: GoldenSet, *, collection: str = ..., corpus_path: str | None = None,
                      corpus_fingerprint: str | None = None, by: str = "", corpus: Corpus | None = None,
                      on_conflict: str | None = None, file_name: str = "", count_file_grades: bool = True) -> Any: ...
    def plan_import(self, golden: GoldenSet, *, collection: str = ...) -> Any: ...
    def export_golden(self, *, collection: str = ..., complete_only: bool = False,
                      mark_stale: bool = False, with_machine: bool = False) -> GoldenSet: ...


@dataclass(frozen=True)
class Imported:
    """What an import did: the store's summary, and the corpus version the collection had before."""

    summary: Any  # labeler_storage.records.ImportSummary
    previous_fingerprint: str | None

    def corpus_changed(self, fingerprint: str | None) -> bool:
        """True when the collection was labelled against another version of the corpus."""
        return bool(fingerprint) and self.previous_fingerprint not in (None, fingerprint)


def read_for_import(source: str | Path | IO[bytes], *, corpus: Corpus | None = None, keep_scale: bool = False,
                    check_doc_ids: bool = True) -> GoldenSet:
    """Read and validate a golden JSONL file (or BEIR folder) whole, before any database is touched.

    With `corpus` (and `check_doc_ids`), every doc id must be one of its documents. Raises
    GoldenFormatError listing every bad line.
    """
    return read_golden(source, keep_scale=keep_scale,
                       doc_ids=corpus.doc_ids() if corpus is not None and check_doc_ids else None)


def _in(collection: str | None) -> dict[str, str]:
    # None: the store's own collection (a Store's default one, or the one a bound store acts on).
    return {} if collection is None else {"collection": collection}


def plan_golden_import(store: GoldenStore, golden: GoldenSet, *, collection: str | None = None) -> Any:
    """Which questions of a validated golden set are new, identical or conflicting in the collection
    (a labeler_storage.records.ImportPlan); writes nothing."""
    return store.golden.plan(golden, **_in(collection))


def import_golden_set(store: GoldenStore, golden: GoldenSet, *, corpus: Corpus | None = None,
                      corpus_path: str | None = None, collection: str | None = None,
                      by: str = "", on_conflict: str | None = None, file_name: str = "",
                      count_file_grades: bool = COUNT_FILE_GRADES) -> Imported:
    """Import a validated golden set in one transaction; with `corpus`, the collection records it
    as the corpus the golden set is written against. `by`: who imports (kept with replaced grades).
    Conflicting questions are imported only as `on_conflict` says ("new", "skip" or "replace");
    without it they raise ImportConflictError and nothing is written. A consensus-only file's grades
    become one grade source named by `file_name` and the time (labeler_storage.grade_sources), counted in
    the consensus where no person graded the document if `count_file_grades`, else kept apart."""
    before = store.collections.get(**_in(collection))
    summary = store.golden.import_set(golden, corpus_path=corpus_path, by=by, corpus=corpus, on_conflict=on_conflict,
                                  file_name=file_name, count_file_grades=count_file_grades, **_in(collection))
    return Imported(summary, before.corpus_fingerprint if before is not None else None)


@dataclass(frozen=True)
class ExportFormat:
    """One way to write a golden set: as a file or folder, and as a download."""

    name: str
    label: str
    write: Callable[[GoldenSet, str | Path], None]
    file_name: str
    mime: str


def _beir_zip(golden: GoldenSet) -> bytes:
    queries, qrels = serialize_beir(golden)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("queries.jsonl", queries)
        zf.writestr("qrels/test.tsv", qrels)
    return buf.getvalue()


FORMATS = {
    "jsonl": ExportFormat("jsonl", "Golden JSONL", write_golden, "golden.jsonl", "application/jsonl"),
    "trec": ExportFormat("trec", "TREC qrels", write_trec_qrels, "golden.qrels", "text/plain"),
    "beir": ExportFormat("beir", "BEIR (zip)", write_beir, "golden-beir.zip", "application/zip"),
}
_SERIALIZE = {"jsonl": lambda g: serialize_golden_jsonl(g).encode("utf-8"),
              "trec": lambda g: serialize_trec_qrels(g).encode("utf-8"), "beir": _beir_zip}


def golden_to_export(store: GoldenStore, *, collection: str | None = None,
                     complete_only: bool = False, mark_stale: bool = False, with_machine: bool = False) -> GoldenSet:
    """The collection's golden set, consensus beside each annotator's grades (mark_stale: with each
    question's stale documents; with_machine: with its machine grades, under their own field); an
    InputError when it has no question."""
    golden = store.golden.export(complete_only=complete_only, mark_stale=mark_stale, with_machine=with_machine,
                                 **_in(collection))
    if not golden.queries:
        name = collection or getattr(store, "collection", DEFAULT_COLLECTION)
        raise InputError(f"collection {name!r} has no questions to export",
                         hint="add questions in the app or `labeler import` a golden file first.")
    return golden


def export_bytes(golden: GoldenSet, fmt: str) -> bytes:
    """The golden set in format `fmt`, in memory (a download); InputError if it cannot be written so."""
    return _SERIALIZE[fmt](golden)


def export_to(golden: GoldenSet, fmt: str, out: str | Path) -> None:
    """Write the golden set in format `fmt` to `out` (a file, or a folder for BEIR), atomically."""
    if not str(out).strip() or Path(out).name in ("", ".", ".."):
        raise InputError(f"{str(out)!r} names no file or folder to write", path=str(out) or None,
                         hint="give an output path, e.g. golden.jsonl.")
    FORMATS[fmt].write(golden, out)
