"""Which corpus the app works on, shared by every page: the one recorded on the collection (the
golden set is written against it), else `$LABELER_CORPUS`, else the bundled sample corpus."""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from labeler.corpus import Corpus
from labeler.paths import SAMPLE_CORPUS
from labeler_app.access import Actor, Can
from labeler_app.transfer import import_golden_set, read_for_import
from labeler_storage import Collection, Store

CORPUS_ENV = "LABELER_CORPUS"
DEMO_GOLDEN = SAMPLE_CORPUS / "golden.jsonl"
DEMO_COLLECTION = "demo"


def normalize_corpus_path(path: str | Path) -> str:
    """Absolute path string: the cache key of a corpus and what the database records."""
    return str(Path(path).expanduser().resolve())


def default_corpus_path() -> str:
    """`$LABELER_CORPUS`, else the bundled sample corpus."""
    return normalize_corpus_path(os.environ.get(CORPUS_ENV) or SAMPLE_CORPUS)


@dataclass(frozen=True)
class ActiveCorpus:
    """The corpus path the app should open, a note when it is not the recorded one, and the
    collection as read (so recording the corpus needs no second read)."""

    path: str
    note: str = ""
    collection: Collection | None = None


def active_corpus(store: Store) -> ActiveCorpus:
    """The collection's recorded corpus if it still exists, else the default corpus."""
    coll = store.collections.get()
    recorded = coll.corpus_path if coll is not None else None
    if recorded and Path(recorded).exists():
        return ActiveCorpus(recorded, collection=coll)
    if recorded:
        return ActiveCorpus(default_corpus_path(),
                            f"The corpus this golden set was written against, {recorded}, is gone; "
                            "opened the default corpus instead. Hint: open the right corpus on the Corpus page.",
                            coll)
    return ActiveCorpus(default_corpus_path(), collection=coll)


def corpus_signature(path: str | Path) -> str:
    """What changes when the corpus on disk changes (sizes and modification times of its files):
    part of the key the app caches a corpus under, so an edited corpus is read again (and its new
    version recorded) on the next rerun, not at the next restart."""
    p = Path(path)
    try:
        if not p.is_dir():
            st = p.stat()
            return f"{st.st_mtime_ns}:{st.st_size}"
        parts = []
        for root, dirs, files in os.walk(p):
            dirs.sort()
            for name in sorted(files):
                st = os.stat(os.path.join(root, name))
                parts.append(f"{os.path.relpath(os.path.join(root, name), p)}:{st.st_mtime_ns}:{st.st_size}")
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]
    except OSError:
        return "unreadable"  # loading it says why


def is_sample_corpus(path: str | Path) -> bool:
    """True for the bundled sample corpus (folder or its corpus.jsonl)."""
    p = Path(path).resolve()
    return p in (SAMPLE_CORPUS.resolve(), (SAMPLE_CORPUS / "corpus.jsonl").resolve())


def use_corpus(store: Store, actor: Actor, path: str | Path, corpus: Corpus) -> None:
    """Record `corpus` (loaded from `path`) as the one the golden set is written against: it
    changes what every session works on, so admins only."""
    actor.require(Can.OPEN_CORPUS)
    _record(store, path, corpus, by=actor.name)


def _record(store: Store, path: str | Path, corpus: Corpus, by: str = "") -> None:
    store.collections.ensure(corpus_path=normalize_corpus_path(path), by=by, corpus=corpus)


def ensure_corpus_recorded(store: Store, active: ActiveCorpus, corpus: Corpus) -> None:
    """On first start, record the opened corpus on the (new) collection; later starts read it. When
    the recorded corpus's content changed on disk (or no version was recorded yet, as in a database
    from before versions), record its new version: the labels it makes stale show at once."""
    coll, path = active.collection, active.path
    if coll is None or not coll.corpus_path or (coll.corpus_path == path
                                                 and coll.version_fingerprint != corpus.fingerprint):
        _record(store, path, corpus)  # the server's own choice ($LABELER_CORPUS or the sample), not a user's


def demo_offer(corpus_path: str, collection: str) -> bool:
    """Offer the demo golden set: the sample corpus is open and the current collection is not the demo's
    (loading it never touches the user's own collection: it has its own)."""
    return collection != DEMO_COLLECTION and is_sample_corpus(corpus_path)


def load_demo_golden(store: Store, actor: Actor, corpus: Corpus, corpus_path: str):
    """Import the sample corpus's 62-question demo golden set into its own collection, DEMO_COLLECTION;
    the store's ImportSummary. Loading it again adds only what is missing: a demo question someone
    changed there stays as they left it."""
    actor.require(Can.IMPORT_GOLDEN)
    golden = read_for_import(DEMO_GOLDEN, corpus=corpus)
    return import_golden_set(store, golden, corpus=corpus, corpus_path=normalize_corpus_path(corpus_path),
                             collection=DEMO_COLLECTION, by=actor.name, on_conflict="skip",
                             file_name=DEMO_GOLDEN.name).summary
