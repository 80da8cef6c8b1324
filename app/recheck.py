"""Stale labels in the app: the Re-check queue (old and new text side by side, confirm or regrade),
the counts the Golden set page shows, and the corpus versions the Corpus page lists.

A judgment is stale when its document was edited or deleted since it was given (labeler_storage.versions).
Confirming says "my grade still holds for the text as it is now": the grade is kept and becomes
current. Regrading is an ordinary grade (labeler_app.label.grade) against the current text.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from labeler.corpus import Corpus, Document
from labeler.corpus.versions import DELETED, golden_staleness, stale_count_text, word_diff
from labeler.errors import InputError
from labeler.golden import GoldenSet
from labeler_app.access import Actor, Can
from labeler_app.text import counted, inert
from labeler_storage import Store
from labeler_storage.versions import StaleJudgment

RECHECK_PAGE = 10  # items shown at once: each carries two texts


@dataclass(frozen=True)
class RecheckItem:
    """One of my stale judgments, ready to render."""

    query_id: str
    question: str
    doc_id: str
    grade: int
    reason: str  # "edited" or "deleted"
    old_markup: str  # the text I judged, with what has gone marked
    new_markup: str  # the text now, with what is new marked ("" when deleted)
    old_known: bool  # False when the judged text was not kept (given before versions)

    @property
    def heading(self) -> str:
        """`q-0003 · leave-004 · your grade 3 · edited since you judged it`, as inert markdown."""
        why = "edited since you judged it" if self.reason != DELETED else "deleted from the corpus"
        return f"{inert(self.query_id)} · {inert(self.doc_id)} · your grade {self.grade} · {why}"


def diff_markup(old: str, new: str) -> tuple[str, str]:
    """(old, new) as inert markdown: words only in old struck through in red, only in new in green."""
    left, right = [], []
    for op, text in word_diff(old, new):
        shown = inert(text)
        if op == "=":
            left.append(shown)
            right.append(shown)
        elif op == "-" and text.strip():
            left.append(f":red-background[~~{shown.strip()}~~]" + (" " if text.endswith(" ") else ""))
        elif op == "+" and text.strip():
            right.append(f":green-background[{shown.strip()}]" + (" " if text.endswith(" ") else ""))
    return "".join(left), "".join(right)


def _render(doc: Document | None) -> str:
    if doc is None:
        return ""
    meta = "; ".join(f"{k}: {v}" for k, v in sorted(doc.metadata.items()))
    return "\n".join(part for part in (doc.title, doc.text, meta) if part)


def recheck_items(store: Store, corpus: Corpus, annotator: str, stale: Sequence[StaleJudgment],
                  limit: int = RECHECK_PAGE) -> list[RecheckItem]:
    """My first `limit` stale judgments with the old and the current text, diffed word by word."""
    items = []
    texts = {q.query_id: q.question for q in store.questions.index()} if stale else {}
    for sj in [s for s in stale if s.annotator == annotator][:limit]:
        old = store.collections.judged_content(sj.given_hash)
        now = corpus.get(sj.doc_id)
        old_text, new_text = _render(old), _render(now)
        if old is None:
            old_markup, new_markup = "", inert(new_text)
        else:
            old_markup, new_markup = diff_markup(old_text, new_text)
        items.append(RecheckItem(sj.query_id, texts.get(sj.query_id, ""), sj.doc_id, sj.grade, sj.reason,
                                 old_markup, new_markup if now is not None else "", old is not None))
    return items


# A word (letters) or a number with the punctuation inside it ("5.5", "1,000", "2026-11-29"): the
# tokens whose sequence is the text's meaning for `unchanged_meaning`.
_TOKEN = re.compile(r"\d+(?:[.,:/-]\d+)*|[^\W\d_]+")


def meaning_tokens(text: str) -> list[str]:
    """The text's words and numbers, case-folded, in order: what stays when whitespace, punctuation
    between words and letter case are set aside."""
    return _TOKEN.findall(text.casefold())


def unchanged_meaning(old: Document | None, new: Document | None) -> bool:
    """True when an edit changed only whitespace, punctuation between words or letter case of the
    title, text and metadata: the same words and numbers in the same order. A number's own
    punctuation counts ("5.5" is not "55", "1,000" is not "1.000"), and a deleted document, or one
    whose judged text was not kept, never qualifies: those need a person."""
    if old is None or new is None:
        return False
    return meaning_tokens(_render(old)) == meaning_tokens(_render(new))


def trivially_edited(store: Store, corpus: Corpus, annotator: str,
                     stale: Sequence[StaleJudgment]) -> list[StaleJudgment]:
    """The annotator's stale judgments whose document changed without a change of meaning."""
    return [sj for sj in stale if sj.annotator == annotator and sj.reason != DELETED
            and unchanged_meaning(store.collections.judged_content(sj.given_hash), corpus.get(sj.doc_id))]


def confirm_unchanged_meaning(store: Store, actor: Actor, corpus: Corpus, stale: Sequence[StaleJudgment]) -> str:
    """Confirm, in one go, every grade of mine whose document changed only in whitespace,
    punctuation or case (`trivially_edited`). The message to show."""
    actor.require(Can.GRADE)
    trivial = trivially_edited(store, corpus, actor.name, stale)
    for sj in trivial:
        store.judgments.confirm(sj.query_id, sj.doc_id, annotator=actor.name, doc=corpus.get(sj.doc_id))
    if not trivial:
        return "No grade to confirm: every changed document changed in its words or numbers."
    return (f"Confirmed {counted(len(trivial), 'grade')} whose document changed only in whitespace, punctuation or "
            "case; the others still wait for you.")


def confirm(store: Store, actor: Actor, corpus: Corpus, query_id: str, doc_id: str) -> str:
    """My grade still holds for the document as it is now: it becomes current. The message to show."""
    actor.require(Can.GRADE)
    doc = corpus.get(doc_id)
    if doc is None:
        raise InputError(f"{doc_id} is not in the open corpus, so there is no current text to confirm against",
                         hint="remove your grade, or open the corpus that has it.")
    store.judgments.confirm(query_id, doc_id, annotator=actor.name, doc=doc)
    return f"Confirmed: your grade of {doc_id} on {query_id} holds for its current text."


def remove(store: Store, actor: Actor, query_id: str, doc_id: str) -> str:
    """Remove my grade of a document that is gone (the old grade stays in the history)."""
    actor.require(Can.GRADE)
    store.judgments.clear(query_id, doc_id, annotator=actor.name)
    return f"Removed your grade of {doc_id} on {query_id} (kept in its history)."


def stale_line(store: Store, golden: GoldenSet) -> str:
    """The Golden set page's line: how many judged documents of `golden` (the collection's export)
    are stale against the current corpus version, in the words and by the count Evaluate uses
    ("" when none, or before a version is recorded)."""
    current = store.collections.doc_hashes()
    found = golden_staleness(golden, current) if current is not None else None
    if found is None or not found.n_stale:
        return ""
    version = getattr(store.collections.get(), "corpus_version", None)
    against = f" against corpus version {version}" if version else ""
    return (f"{stale_count_text(found.n_stale, found.n_judged, found.n_missing, found.n_edited, found.n_questions)}"
            f"{against}. Re-check them on the Label page; evaluations count them (and can leave them out).")


def version_rows(store: Store) -> list[dict[str, Any]]:
    """The Corpus page's history: one row per recorded version, newest first. A row recording another
    corpus (another source: labeler.corpus.versions.same_source) has no added/deleted/edited counts."""
    def count(v, ids) -> int | None:
        return None if v.new_corpus else len(ids)

    return [{"version": v.version, "recorded": v.created_at, "by": v.created_by, "documents": v.n_docs,
             "added": count(v, v.diff.added), "deleted": count(v, v.diff.deleted), "edited": count(v, v.diff.edited),
             "note": v.note, "path": v.corpus_path or "", "fingerprint": v.fingerprint[:19]}
            for v in store.collections.versions()]


def version_diff(store: Store, version: int) -> dict[str, tuple[str, ...]]:
    """The documents one version added, deleted and edited."""
    found = next((v for v in store.collections.versions() if v.version == version), None)
    if found is None:
        raise InputError(f"no corpus version {version}", hint="pick one from the history.")
    return {"added": found.diff.added, "deleted": found.diff.deleted, "edited": found.diff.edited}
