"""What changed between two contents of a corpus, which labels that makes stale, and a word diff.

A corpus version is the set of (doc id, content hash) (`Document.content_hash`). A judgment
remembers the hash of the document it was given against; it is *stale* when that document was
edited since (another hash) or deleted (gone). Pure functions: storage keeps the versions, the
app and the CLI show what these compute.
"""
from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from labeler.corpus import Corpus
from labeler.golden import GoldenSet

DOC_HASHES_FIELD = "doc_hashes"  # golden JSONL v1, optional: {doc_id: "sha256:..."} per question
EDITED, DELETED = "edited", "deleted"


@dataclass(frozen=True)
class CorpusDiff:
    """Documents added, deleted and edited (same id, another content hash), each sorted."""

    added: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    edited: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added or self.deleted or self.edited)

    @property
    def text(self) -> str:
        """`+3 added, −1 deleted, ~2 edited` (or `no change`)."""
        if not self:
            return "no change"
        return f"+{len(self.added)} added, −{len(self.deleted)} deleted, ~{len(self.edited)} edited"

    def as_json(self) -> dict[str, list[str]]:
        """The stored shape."""
        return {"added": list(self.added), "deleted": list(self.deleted), "edited": list(self.edited)}

    @classmethod
    def from_json(cls, data: Mapping[str, list[str]]) -> "CorpusDiff":
        """The diff of a stored version."""
        return cls(tuple(data.get("added", ())), tuple(data.get("deleted", ())), tuple(data.get("edited", ())))


# An uploaded corpus is kept as <home>/corpora/<stem>-<16 hex of its bytes>[/<file name>]: each
# upload of an edited file gets a new folder, but it is the same source.
_UPLOADED = re.compile(r"[/\\]corpora[/\\](?P<stem>[^/\\]+)-[0-9a-f]{16}(?:[/\\](?P<name>[^/\\]+))?$")


def corpus_source(corpus_path: str | None) -> str | None:
    """What a corpus was opened from, the same for every version of it: the path it was opened
    from, or for an upload the uploaded file's name (`upload:handbook.jsonl`). None when unknown."""
    if not corpus_path:
        return None
    if m := _UPLOADED.search(corpus_path):
        return f"upload:{m['name'] or m['stem'] + '.zip'}"
    return corpus_path


def same_source(old_path: str | None, new_path: str | None) -> bool:
    """True when `new_path` can hold a new version of the corpus opened from `old_path`: the same
    source, or a source unknown on either side (databases from before paths were recorded)."""
    old, new = corpus_source(old_path), corpus_source(new_path)
    return old is None or new is None or old == new


def diff_hashes(old: Mapping[str, str], new: Mapping[str, str]) -> CorpusDiff:
    """How `new` (doc_id -> content hash) differs from `old`."""
    return CorpusDiff(tuple(sorted(new.keys() - old.keys())), tuple(sorted(old.keys() - new.keys())),
                      tuple(sorted(d for d in new.keys() & old.keys() if new[d] != old[d])))


def staleness(given: str | None, current: str | None) -> str | None:
    """Why a judgment given against hash `given` is stale now (`current`: None when the document
    is gone): "edited", "deleted", or None while it is current (or was given with no hash known)."""
    if current is None:
        return DELETED
    if given is not None and given != current:
        return EDITED
    return None


@dataclass(frozen=True)
class GoldenStaleness:
    """A golden set's judged documents checked against a corpus: per question, the documents
    that are missing from it, and those whose content differs from the hash the file carries."""

    missing: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    edited: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    n_judged: int = 0
    n_hashed: int = 0  # judged documents whose hash the file carries (the others cannot be checked for edits)

    @property
    def n_missing(self) -> int:
        """Judged documents the corpus lacks."""
        return sum(len(v) for v in self.missing.values())

    @property
    def n_edited(self) -> int:
        """Judged documents whose content changed since they were judged."""
        return sum(len(v) for v in self.edited.values())

    @property
    def n_stale(self) -> int:
        """Judgments that no longer describe the corpus: missing plus edited."""
        return self.n_missing + self.n_edited

    def pairs(self) -> set[tuple[str, str]]:
        """Every stale (query_id, doc_id)."""
        return {(q, d) for part in (self.missing, self.edited) for q, docs in part.items() for d in docs}

    @property
    def n_questions(self) -> int:
        """Questions with at least one stale judged document."""
        return len(set(self.missing) | set(self.edited))

    @property
    def text(self) -> str:
        """One line: how many judged documents are stale against this corpus, and why."""
        if not self.n_judged:
            return "no judged documents"
        unchecked = self.n_judged - self.n_hashed
        tail = f"; {unchecked} carry no content hash, so edits to them cannot be seen" if unchecked else ""
        return stale_count_text(self.n_stale, self.n_judged, self.n_missing, self.n_edited, self.n_questions) + tail


def stale_count_text(n_stale: int, n_judged: int, n_missing: int, n_edited: int, n_questions: int) -> str:
    """The one wording of a stale count, on every page and in the CLI. It counts judged documents:
    (question, document) pairs, however many grades each has, as the exported golden set holds them."""
    questions = f"{n_questions} question{'' if n_questions == 1 else 's'}"
    return (f"{n_stale} of {n_judged} judged documents stale on {questions}: {n_missing} missing from the corpus, "
            f"{n_edited} edited since judged")


def golden_staleness(golden: GoldenSet, corpus: Corpus | Mapping[str, str]) -> GoldenStaleness:
    """Check every judged document of `golden` (content hashes from the file's optional `doc_hashes`
    field: the hash its latest grade was given against) against `corpus`, or against the current
    {doc_id: content hash} of a corpus version."""
    if isinstance(corpus, Corpus):
        docs = corpus
        current = lambda doc_id: (doc.content_hash if (doc := docs.get(doc_id)) is not None else None)  # noqa: E731
    else:
        current = corpus.get
    missing: dict[str, tuple[str, ...]] = {}
    edited: dict[str, tuple[str, ...]] = {}
    n_judged = n_hashed = 0
    for q in golden.queries:
        hashes = q.extra.get(DOC_HASHES_FIELD)
        hashes = hashes if isinstance(hashes, Mapping) else {}
        gone, changed = [], []
        for doc_id in sorted(q.relevance):
            n_judged += 1
            given = hashes.get(doc_id) if isinstance(hashes.get(doc_id), str) else None
            n_hashed += given is not None
            why = staleness(given, current(doc_id))
            if why == DELETED:
                gone.append(doc_id)
            elif why == EDITED:
                changed.append(doc_id)
        if gone:
            missing[q.query_id] = tuple(gone)
        if changed:
            edited[q.query_id] = tuple(changed)
    return GoldenStaleness(missing, edited, n_judged, n_hashed)


_WORD = re.compile(r"\s+|[^\s]+")


def word_diff(old: str, new: str) -> list[tuple[str, str]]:
    """The two texts as (op, text) runs, word by word: op "=" same, "-" only in old, "+" only in new."""
    a, b = _WORD.findall(old), _WORD.findall(new)
    out: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            out.append(("=", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            out.append(("-", "".join(a[i1:i2])))
        if j2 > j1:
            out.append(("+", "".join(b[j1:j2])))
    return out
