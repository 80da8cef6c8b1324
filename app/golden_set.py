"""Golden set page: every question with its labels, health against the targets, disagreements
and agreement, edit/delete, the three downloads, and importing an uploaded golden JSONL.

`overview` reads the collection once and returns plain data, so the page can cache it on the
store's revision (it changes with every write) and a rerun that changes nothing reads nothing.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import IO, Any

from labeler.agreement import agreement, consensus, unanswerable_disagreement
from labeler.corpus import Corpus
from labeler.errors import AccessDenied, InputError
from labeler.golden import GoldenHealth, GoldenSet, golden_health
from labeler.status import Status
from labeler_app.access import Actor, Can
from labeler_app.adjudicate import differ_from_import, imported_grades, imported_note, people_ratings
from labeler_app.blind import HIDDEN, sees_others
from labeler_app.label import question_choice_label
from labeler_app.recheck import stale_line
from labeler_app.text import inert
from labeler_app.transfer import (
    COUNT_FILE_GRADES, FORMATS, export_bytes, import_golden_set, plan_golden_import, read_for_import,
)
from labeler_app.workspace import normalize_corpus_path
from labeler_storage import Store, is_file_source
from labeler_storage.records import ImportPlan

STATUS_CHOICES = tuple(s.value for s in Status)
COLUMNS = ("query_id", "question", "type", "status", "judged", "relevant", "labels", "annotators", "updated")
DOWNLOADS = tuple((name, fmt.label) for name, fmt in FORMATS.items())


@dataclass(frozen=True)
class QuestionEdit:
    """What the edit form starts from."""

    text: str
    query_type: str
    notes: str
    n_judgments: int


@dataclass(frozen=True)
class GoldenOverview:
    """Everything the Golden set page shows, as plain picklable data."""

    rows: tuple[dict[str, Any], ...]
    choices: dict[str, str]             # query_id -> picker label
    edits: dict[str, QuestionEdit]
    query_types: tuple[str, ...]
    health: GoldenHealth
    disagreements: tuple[dict[str, Any], ...]  # between people (the first 50)
    agreement: str
    unanswerable_disagreements: tuple[dict[str, Any], ...] = ()  # votes against relevant grades
    stale: str = ""  # how many judged documents are stale against the current corpus version ("" when none)
    import_differences: tuple[dict[str, Any], ...] = ()  # people's grades against an imported one (the first 50)
    n_disagreements: int = 0  # between people: documents graded differently, unanswerable splits
    n_with_import: int = 0  # the same, where only the imported grades disagree: not counted, not adjudicated


def _agreement_line(ratings) -> str:
    report = agreement(people_ratings(ratings))
    note = (" " + imported_note(ratings)).rstrip()
    if len(report.annotators) < 2:
        return "Agreement needs two or more annotators grading the same documents." + note

    def fmt(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.2f}"

    pairs = "; ".join(f"{inert(p.annotator_a)}-{inert(p.annotator_b)}: {fmt(p.kappa)} on {p.n_items}"
                      for p in report.pairs[:6])  # markdown: a caption
    return (f"Agreement between annotators over {report.n_items} shared judgments: Krippendorff's α (ordinal) = "
            f"{fmt(report.krippendorff_alpha)}, Fleiss' κ = {fmt(report.fleiss_kappa)}"
            + (f"; Cohen's κ per pair: {pairs}" if pairs else "") + "." + note)


def _grades(by: dict[str, int]) -> str:
    return ", ".join(f"{a}:{g}" for a, g in sorted(by.items()))


def overview(store: Store, *, max_disagreements: int = 50) -> GoldenOverview:
    """The page's data from one read of the collection's questions and judgments."""
    statuses = store.questions.list()
    ratings: dict[tuple[str, str], dict[str, int]] = {}
    rows, choices, edits, types, split, people_split = [], {}, {}, {}, [], 0
    for s in statuses:
        q = s.question
        mine: dict[str, dict[str, int]] = {}  # doc_id -> people's grades (a split of people only is theirs)
        for j in s.judgments:
            ratings.setdefault((q.query_id, j.doc_id), {})[j.annotator] = j.grade
            if not is_file_source(j.annotator):
                mine.setdefault(j.doc_id, {})[j.annotator] = j.grade
        labels = ", ".join(f"{d}:{g}" for d, g in sorted(s.consensus.items(), key=lambda kv: (-kv[1], kv[0])))
        annotators = list(q.annotators) + [a for a in s.annotators if a not in q.annotators]
        rows.append({"query_id": q.query_id, "question": q.question, "type": q.query_type, "status": str(s.status),
                     "judged": s.n_judged, "relevant": s.n_relevant, "labels": labels,
                     "annotators": ", ".join(annotators), "unanswerable votes": ", ".join(s.voters),
                     "updated": q.updated_at})
        if said := s.unanswerable_disagreement:
            people_split += bool(unanswerable_disagreement({v for v in s.voters if not is_file_source(v)}, mine))
            split.append({"query_id": q.query_id, "consensus": "unanswerable" if q.unanswerable else "answerable",
                          "unanswerable": ", ".join(a for a, v in said.items() if v == "unanswerable"),
                          "graded relevant": ", ".join(a for a, v in said.items() if v == "answerable")})
        choices[q.query_id] = question_choice_label(q.query_id, s.status, q.question)
        edits[q.query_id] = QuestionEdit(q.question, q.query_type, q.notes, len(s.judgments))
        if q.query_type:
            types[q.query_type] = types.get(q.query_type, 0) + 1
    people = people_ratings(ratings)
    between = consensus(people).disagreements
    disagreements = tuple({"query_id": d.query_id, "doc_id": d.doc_id, "consensus": d.consensus, "spread": d.spread,
                           "grades": _grades(d.grades)} for d in between[:max_disagreements])
    differ, qrels = differ_from_import(ratings), {q.question.query_id: q.consensus for q in statuses}
    with_import = tuple({"query_id": q, "doc_id": d, "imported": _grades(imported_grades(ratings[q, d])),
                         "annotators": _grades(people[q, d]),
                         "consensus": qrels[q].get(d, "")} for q, d in differ[:max_disagreements])
    golden = store.golden.export()
    return GoldenOverview(tuple(rows), choices, edits, tuple(sorted(types, key=lambda t: (-types[t], t))),
                          golden_health(golden), disagreements, _agreement_line(ratings), tuple(split),
                          stale_line(store, golden),
                          with_import, len(between) + people_split, len(differ) + len(split) - people_split)


def filter_rows(rows: Sequence[dict[str, Any]], *, text: str = "", types: Sequence[str] = (),
                status_in: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The table rows matching a text (in id or question), query types and statuses."""
    needle = text.strip().lower()
    return [r for r in rows
            if (not needle or needle in r["question"].lower() or needle in r["query_id"].lower())
            and (not types or r["type"] in types) and (not status_in or r["status"] in status_in)]


BLIND_NOTE = ("**Blind judging** is on: as an annotator you see your own grades only — the labels, annotators, "
              "disagreements, agreement, others' grade history and the downloads show to admins and viewers.")


def for_actor(view: GoldenOverview, store: Store, actor: Actor) -> GoldenOverview:
    """The overview as `actor` may see it: under blind judging an annotator's copy holds no consensus
    labels, annotators, votes, disagreements or agreement figures."""
    if sees_others(store, actor):
        return view
    rows = tuple({**r, "relevant": None, "labels": HIDDEN, "annotators": HIDDEN, "unanswerable votes": HIDDEN}
                 for r in view.rows)
    return replace(view, rows=rows, disagreements=(), unanswerable_disagreements=(), agreement=HIDDEN,
                   import_differences=(), n_disagreements=0, n_with_import=0)


def golden_downloads(store: Store, actor: Actor) -> dict[str, tuple[bytes, str, str] | str]:
    """format -> (bytes, file name, mime) of the collection's golden set, or why it cannot be
    written in that format (e.g. an id TREC qrels cannot hold). Refused to an annotator while the
    team judges blind: an export is everyone's consensus."""
    actor.require(Can.EXPORT)
    if not sees_others(store, actor):
        raise AccessDenied("downloads are hidden from annotators while the team judges blind",
                           hint="an admin or a viewer can download the golden set.")
    golden = store.golden.export()
    out: dict[str, tuple[bytes, str, str] | str] = {}
    for name, fmt in FORMATS.items():
        try:
            out[name] = (export_bytes(golden, name), fmt.file_name, fmt.mime)
        except InputError as exc:
            out[name] = str(exc)
    return out


# --------------------------------------------------------------------------- actions


CONFLICT_CHOICES = {"new": "Import them as new questions (fresh ids; the file's id kept as source_id)",
                    "skip": "Skip them (the questions here stay as they are)",
                    "replace": "Replace them (admins; the replaced text and grades go to the grade history)"}


def _read(uploaded: IO[bytes], corpus: Corpus, keep_scale: bool, check_doc_ids: bool) -> GoldenSet:
    uploaded.seek(0)  # the preview read it already
    return read_for_import(uploaded, corpus=corpus, keep_scale=keep_scale, check_doc_ids=check_doc_ids)


def preview_golden_file(store: Store, actor: Actor, uploaded: IO[bytes], corpus: Corpus, *,
                        keep_scale: bool = False, check_doc_ids: bool = True) -> ImportPlan:
    """Validate an uploaded golden JSONL (a binary file object with `.name`) and say which of its
    questions are new, identical or conflicting here; writes nothing. Raises GoldenFormatError
    listing every bad line. Admins only."""
    actor.require(Can.IMPORT_GOLDEN)
    return plan_golden_import(store, _read(uploaded, corpus, keep_scale, check_doc_ids))


def conflict_rows(plan: ImportPlan) -> list[dict[str, Any]]:
    """The preview's table: each conflicting question, why, its text here and in the file."""
    return [{"query_id": c.query_id, "why": ", ".join(c.reasons), "here": c.stored_text, "in the file": c.file_text}
            for c in plan.conflicts]


def import_golden_file(store: Store, actor: Actor, uploaded: IO[bytes], corpus: Corpus, corpus_path: str, *,
                       keep_scale: bool = False, check_doc_ids: bool = True, on_conflict: str | None = None,
                       count_file_grades: bool = COUNT_FILE_GRADES):
    """Validate an uploaded golden JSONL and import it whole: new questions added, identical ones
    left, conflicting ones as `on_conflict` says (without a choice: an ImportConflictError, nothing
    written); the store's ImportSummary. Raises GoldenFormatError listing every bad line; nothing
    is imported then. Admins only; replacing questions edits other people's work besides. A
    consensus-only file's grades become a source named by the file (its `.name`) and the time,
    counted in the consensus or kept apart as `count_file_grades` says."""
    actor.require(Can.IMPORT_GOLDEN)
    if on_conflict == "replace":
        actor.require(Can.EDIT_ANY_QUESTION)
    golden = _read(uploaded, corpus, keep_scale, check_doc_ids)
    return import_golden_set(store, golden, corpus=corpus, corpus_path=normalize_corpus_path(corpus_path),
                             by=actor.name, on_conflict=on_conflict, file_name=getattr(uploaded, "name", ""),
                             count_file_grades=count_file_grades).summary


def upload_hint(hint: str) -> str:
    """An import hint in the page's words: the checkboxes, not the CLI flags they stand for."""
    return (hint.replace("with --keep-scale (in Python: keep_scale=True)", "when you tick \"Keep the file's own grade scale\"")
            .replace("--no-check-doc-ids", "untick \"Refuse documents missing from the corpus\""))


def require_question_owner(store: Store, actor: Actor, query_id: str) -> None:
    """Admins may change any question; an annotator only their own, and only while no one else judged it."""
    if actor.can(Can.EDIT_ANY_QUESTION):
        return
    actor.require(Can.EDIT_OWN_QUESTION)
    status = store.questions.status(query_id)
    if status is None:
        raise InputError(f"no question {query_id!r}", hint="pick one from the list.")
    if status.question.author != actor.name:
        raise AccessDenied(f"{query_id} was written by {status.question.author or 'an import'}, not by {actor.name}",
                           hint="an annotator may change only their own questions; ask an admin.")
    others = sorted({j.annotator for j in status.judgments} - {actor.name})
    if others:
        raise AccessDenied(f"{query_id} has judgments by {', '.join(others[:3])}",
                           hint="a question others have judged can be changed only by an admin.")


def edit_question(store: Store, actor: Actor, query_id: str, text: str, query_type: str, notes: str) -> str:
    """Save a question's text, type and notes (its judgments stay); what to tell the user."""
    require_question_owner(store, actor, query_id)
    old = store.questions.get(query_id)
    query_type = (query_type or "").strip()
    if old is not None and (old.question, old.query_type, old.notes) == (text, query_type, notes):
        return f"Nothing to save: {query_id} is unchanged."
    store.questions.edit(query_id, text=text, query_type=query_type, notes=notes, by=actor.name)
    return f"Saved {query_id}."


def delete_question(store: Store, actor: Actor, query_id: str) -> None:
    """Delete a question and its judgments."""
    require_question_owner(store, actor, query_id)
    store.questions.delete(query_id)


def grade_history_rows(store: Store, query_id: str, actor: Actor | None = None) -> list[dict[str, Any]]:
    """Every grade given on the question, current and replaced, for the history table (under blind
    judging, an annotator's own grades only)."""
    mine_only = actor is not None and not sees_others(store, actor)
    return [{"doc_id": e.doc_id, "annotator": e.annotator, "grade": e.grade, "given": e.given_at,
             "replaced": e.replaced_at or "(current)", "by": e.replaced_by, "change": e.change, "note": e.note}
            for e in store.judgments.history(query_id) if not mine_only or e.annotator == actor.name]


def progress_rows(store: Store, *, window_hours: float = 8) -> list[dict[str, Any]]:
    """Per annotator, for the Golden set page: questions judged, judgments, judgments per hour lately."""
    return [{"annotator": p.annotator, "questions judged": p.questions, "judgments": p.judgments,
             f"judgments / hour (last {window_hours:g} h)": round(p.per_hour, 1)}
            for p in store.queue.progress(window_hours=window_hours)]
