"""A machine judge's grade as a suggestion on the Label page, and what annotators did with it (issue 23, item 5).

When. The team setting `suggestions` (admins, Team page): "after" (the default) shows a judge's grade
of a pair only once the annotator has graded that pair themselves, so their first grade is blind to it;
"before" shows it from the start, for the annotator to keep or change (post-editing); "off" shows none.
Someone who may not grade (a viewer) sees every suggestion. The card carries only the suggestions its
reader may see now (`with_suggestions`): a hidden one never reaches the page, and only `suggested` says
that there is one to record.

What is shown: every judge's latest current grade of the pair (stale ones, whose document changed,
never), whether or not the judge passes the team's bars: a suggestion changes no number. Read in one
query per question (`question_suggestions`; the page caches it).

What is recorded: the first time an annotator grades a pair with a suggestion (labeler_app.label.grade),
one row per judge with the grade shown and theirs then (labeler_storage.suggestions); the post-edit
figures (labeler.judges.post_edit) read their grade now from the judgments.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from labeler.candidates import Candidate, with_ranking
from labeler.judges.post_edit import PostEdit, post_edit_figures
from labeler_app.access import Actor, Can
from labeler_app.label import CandidateView
from labeler_storage import Store
from labeler_storage.team_settings import DEFAULT_SETTINGS, SUGGESTION_MODES

MACHINE_BADGE = "machine-graded"
MODES = dict(zip(SUGGESTION_MODES, ("after the annotator's own grade", "before it, to keep or change", "never")))


@dataclass(frozen=True)
class Suggestion:
    """One judge's current grade of a pair, as a card shows it."""

    judge: str
    grade: int
    model: str = ""


@dataclass(frozen=True)
class QuestionSuggestions:
    """The team's mode and, unless it is "off", doc_id -> the judges' suggestions on one question."""

    mode: str
    by_doc: Mapping[str, tuple[Suggestion, ...]]


def suggestion_mode(store: Store) -> str:
    """The team setting `suggestions`: "after", "before" or "off"."""
    return store.accounts.settings().get("suggestions") or DEFAULT_SETTINGS["suggestions"]


def question_suggestions(store: Store, query_id: str) -> QuestionSuggestions:
    """The mode and the question's suggestions (one query for the grades, none when the mode is "off")."""
    mode = suggestion_mode(store)
    if mode == "off":
        return QuestionSuggestions(mode, {})
    by_doc: dict[str, list[Suggestion]] = {}
    for (doc_id, judge), g in sorted(store.machine.question_grades(query_id).items()):
        by_doc.setdefault(doc_id, []).append(Suggestion(judge, g.grade, g.model))
    return QuestionSuggestions(mode, {d: tuple(s) for d, s in by_doc.items()})


def visible(mode: str, actor: Actor, my_grade: int | None) -> bool:
    """May `actor` see the suggestion on a pair they graded `my_grade` (None: not yet)?"""
    if mode == "off":
        return False
    return mode == "before" or my_grade is not None or not actor.can(Can.GRADE)


def with_suggestions(views: Sequence[CandidateView], found: QuestionSuggestions, actor: Actor) -> list[CandidateView]:
    """The cards with the suggestions `actor` may see now; a pair a judge graded is marked `suggested`."""
    out = []
    for v in views:
        shown = found.by_doc.get(v.doc_id, ())
        if not shown:
            out.append(v)
            continue
        out.append(replace(v, suggestions=shown if visible(found.mode, actor, v.grade) else (), suggested=True))
    return out


def with_machine_graded(pooled: Sequence[Candidate], found: QuestionSuggestions) -> list[Candidate]:
    """The candidates plus the documents a judge graded on this question that no retriever pooled (e.g. a
    run's holes), after the pool with the badge MACHINE_BADGE: the pairs it doubts are then on the page
    when the work queue sends someone to the question (labeler_app.queue_order). The badge says only that
    a judge graded it, never how."""
    pooled_ids = {c.doc_id for c in pooled}
    extra = [d for d in found.by_doc if d not in pooled_ids]
    return with_ranking(pooled, MACHINE_BADGE, {d: i for i, d in enumerate(extra, start=1)}) if extra else list(pooled)


def post_edit(store: Store, judge: str | None = None) -> dict[str, PostEdit]:
    """judge -> what annotators did with its suggestions in the collection (labeler.judges.post_edit)."""
    return post_edit_figures((s.judge, s.machine_grade, s.grade_before, s.grade_now)
                             for s in store.machine.seen(judge=judge))


def post_edit_rows(store: Store) -> list[dict]:
    """The post-edit figures as table rows, one per judge (the Judges page)."""
    return [{"judge": p.judge, "seen": p.seen, "post-edited": p.post_edited, "kept": p.kept,
             "changed up": p.changed_up, "changed down": p.changed_down, "blind": p.blind, "agreed (blind)": p.agreed,
             "revised after seeing": p.revised, "κ post-edited": p.kappa_post_edit, "κ blind": p.kappa_blind}
            for p in post_edit(store).values()]
