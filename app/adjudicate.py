"""Adjudicate page: the questions where annotators disagree, every grade with who gave it, the final
grade an adjudicator sets (with a note), and agreement before and after adjudication.

A document is disputed when its grades fall on both sides of the relevance line (some >= 1, some
0) or spread by 2 or more (labeler.agreement.Disagreement). The adjudicated grade outweighs the
consensus rule in exports and evaluation (labeler_storage.adjudication); the grades stay as given.
"After adjudication" agreement counts each adjudicated document as agreed at its final grade
(every annotator's grade of it replaced by that grade): how much disagreement is left unresolved.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from labeler.agreement import Ratings, consensus
from labeler.agreement_bootstrap import AgreementIntervals, bootstrap_agreement
from labeler.errors import AccessDenied, InputError
from labeler_app.access import Actor, Can
from labeler_app.blind import sees_others
from labeler_storage import Store, is_file_source
from labeler_storage.adjudication import Adjudication

GRADES = (0, 1, 2, 3)


@dataclass(frozen=True)
class Dispute:
    """One disputed (question, document): the grades by annotator, the consensus, and the final grade if set."""

    query_id: str
    doc_id: str
    grades: Mapping[str, int]
    consensus: int
    spread: int
    splits_relevance: bool
    final: Adjudication | None = None


def is_disputed(grades: Mapping[str, int]) -> bool:
    """Grades on both sides of the relevance line (>= 1 and < 1), or a spread of 2 or more."""
    values = list(grades.values())
    return bool(values) and ((max(values) >= 1 > min(values)) or max(values) - min(values) >= 2)


def people_ratings(ratings: Ratings) -> Ratings:
    """The ratings without the imported grades: agreement and adjudication are about people's grades."""
    return {key: {a: g for a, g in by.items() if not is_file_source(a)} for key, by in ratings.items()}


def imported_grades(by: Mapping[str, int]) -> dict[str, int]:
    """source -> grade: the imported files' grades of one document (labeler_storage.grade_sources)."""
    return {a: g for a, g in by.items() if is_file_source(a)}


def differ_from_import(ratings: Ratings) -> list[tuple[str, str]]:
    """The (query_id, doc_id) whose imported grade some annotator graded differently, in key order."""
    return sorted(key for key, by in ratings.items() if (mine := imported_grades(by)) and any(
        g != i for a, g in by.items() if not is_file_source(a) for i in mine.values()))


def imported_note(ratings: Ratings, *, listed: str = "") -> str:
    """What agreement and adjudication leave out, said where their figures are ("" with no imported grade);
    `listed` says where the differing documents are shown."""
    n = sum(1 for by in ratings.values() if imported_grades(by))
    if not n:
        return ""
    differ = len(differ_from_import(ratings))
    return (f"Imported grades are not counted: {n} {'documents carry' if n != 1 else 'document carries'} one; "
            + (f"on {differ} of them an annotator's grade differs from it{listed}." if differ else
               "no annotator graded any of them differently."))


def require_reader(store: Store, actor: Actor) -> None:
    """Refuse an annotator the queue and its agreement figures while the team judges blind: they name
    who graded what (labeler_app.blind). Admins (who set final grades) and viewers read them."""
    actor.require(Can.READ)
    if not sees_others(store, actor):
        raise AccessDenied("the Adjudicate page is for admins while the team judges blind: it shows who graded what",
                           hint="finish your questions on the Label page; an admin adjudicates disagreements.")


def disputes(store: Store, actor: Actor, *, open_only: bool = False) -> list[Dispute]:
    """The queue: disputed documents (people's grades only), unresolved first, then the worst spread."""
    require_reader(store, actor)
    final = store.judgments.adjudications()
    people = people_ratings(store.judgments.ratings())
    out = [Dispute(d.query_id, d.doc_id, d.grades, d.consensus, d.spread, d.splits_relevance,
                   final.get((d.query_id, d.doc_id)))
           for d in consensus(people).disagreements if is_disputed(d.grades)]
    if open_only:
        out = [d for d in out if d.final is None]
    return sorted(out, key=lambda d: (d.final is not None, -d.spread, not d.splits_relevance, d.query_id, d.doc_id))


def dispute_rows(items: Sequence[Dispute]) -> list[dict[str, Any]]:
    """The queue as table rows: every grade with who gave it; the final grade as text ("" while open: one
    type in the column, which Arrow needs)."""
    return [{"query_id": d.query_id, "doc_id": d.doc_id,
             "grades": ", ".join(f"{a}: {g}" for a, g in sorted(d.grades.items())),
             "consensus": d.consensus, "spread": d.spread, "final": "" if d.final is None else str(d.final.grade),
             "by": "" if d.final is None else d.final.by, "note": "" if d.final is None else d.final.note}
            for d in items]


def adjudicate(store: Store, actor: Actor, query_id: str, doc_id: str, grade: int | None, note: str) -> None:
    """Set the final grade (0-3) of a disputed document with a note saying why; None withdraws it."""
    actor.require(Can.ADJUDICATE)
    if grade is not None and grade not in GRADES:
        raise InputError(f"a final grade must be one of 0-3, got {grade!r}", hint="pick a grade from the list.")
    if grade is not None and not (note or "").strip():
        raise InputError("an adjudication needs a note", hint="say in a sentence why this grade is the right one.")
    store.judgments.adjudicate(query_id, doc_id, grade, by=actor.name, note=note or "")


def set_final_grade(store: Store, actor: Actor, query_id: str, doc_id: str, grade: int | None, note: str) -> None:
    """The page's "Set the final grade": like `adjudicate`, but no grade chosen is refused, never
    taken for a withdrawal (the form starts with no grade picked, so nothing is set by accident)."""
    actor.require(Can.ADJUDICATE)
    if grade is None:
        raise InputError("no final grade chosen: nothing was set", hint="pick 0, 1, 2 or 3, then set it.")
    adjudicate(store, actor, query_id, doc_id, grade, note)


def adjudicated_ratings(ratings: Ratings, final: Mapping[tuple[str, str], Adjudication]) -> Ratings:
    """The ratings with every grade of an adjudicated document replaced by its final grade."""
    return {key: ({a: final[key].grade for a in by} if key in final else dict(by)) for key, by in ratings.items()}


@dataclass(frozen=True)
class AgreementView:
    """Agreement before and after adjudication, each statistic with its bootstrap interval."""

    before: AgreementIntervals
    after: AgreementIntervals

    def rows(self) -> list[dict[str, Any]]:
        """One row per statistic: value [95% interval] before and after."""
        out = [{"statistic": "Fleiss' κ (items every annotator judged)", "before": self.before.fleiss_kappa.text(),
                "after": self.after.fleiss_kappa.text()},
               {"statistic": "Krippendorff's α (ordinal)", "before": self.before.krippendorff_alpha.text(),
                "after": self.after.krippendorff_alpha.text()}]
        for pair, interval in self.before.pairs.items():
            out.append({"statistic": f"Cohen's κ {pair[0]} / {pair[1]}", "before": interval.text(),
                        "after": self.after.pairs[pair].text()})
        return out


def agreement_view(store: Store, actor: Actor, *, n_resamples: int = 500, seed: int = 0) -> AgreementView:
    """Agreement of the people (the import excluded) before and after adjudication, with 95% bootstrap
    intervals over resampled questions (fixed seed)."""
    require_reader(store, actor)
    ratings = store.judgments.ratings()
    after = adjudicated_ratings(ratings, store.judgments.adjudications())
    ratings, after = people_ratings(ratings), people_ratings(after)
    return AgreementView(bootstrap_agreement(ratings, n_resamples=n_resamples, seed=seed),
                         bootstrap_agreement(after, n_resamples=n_resamples, seed=seed))
