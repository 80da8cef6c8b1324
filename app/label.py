"""Label page: the question picker, one question's candidates ready to render, and the actions a
grade click, a new question or an "unanswerable" mark performs.

A rerun reads what it shows: the question index (one aggregate query, no judgment rows) and the
current question's judgments; never the whole collection.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from labeler.candidates import Candidate, keyword_search, query_terms, shuffled
from labeler.corpus import Corpus
from labeler.errors import InputError
from labeler.status import Status
from labeler_app.access import Actor, Can
from labeler_app.blind import sees_others
from labeler_app.text import highlight_markup, inert, inert_code, snippet, status_reason
from labeler_storage import Store
from labeler_storage.records import QuestionStatus, QuestionSummary

GRADES = {0: "Not relevant", 1: "Partly", 2: "Relevant", 3: "Answers fully"}
GRADE_KEYS = ("Not", "Partly", "Relevant", "Fully")  # the keyboard bar's short labels
STATUS_MARKS = {Status.DONE: "✓", Status.UNANSWERABLE: "∅", Status.STARTED: "…", Status.NEW: "○"}
STATUS_BADGES = {Status.DONE: ":green-badge[done]", Status.UNANSWERABLE: ":orange-badge[unanswerable]",
                 Status.STARTED: ":gray-badge[started]", Status.NEW: ":gray-badge[new]"}
RETRIEVER_NAMES = {"bm25": "BM25"}
BLIND_NOTE = ("**Blind judging**: other annotators' grades and marks on this question stay hidden until you have "
              "finished it — graded every candidate, or marked it unanswerable.")
UNANSWERABLE_NOTE = ("You marked it **unanswerable**: no document answers it, so your grades 1-3 are off. "
                     "Grade 0 still records \"seen and rejected\".")
# Words too common to be worth a highlight; retrieval itself still sees them.
STOPWORDS = frozenset("""a an and are as at be by can do does did for from has have how i if in is it its me my
no not of on or our so than that the their there this to was we what when where which who why will with you your
""".split())


def highlight_terms(text: str) -> list[str]:
    """The question's terms worth highlighting (query terms minus stop words)."""
    return [t for t in query_terms(text) if t not in STOPWORDS]


@dataclass(frozen=True)
class CandidateView:
    """One document to judge, ready to render: every text field is inert markup or plain text."""

    doc_id: str
    title_markup: str
    snippet_markup: str
    text: str
    metadata: Mapping[str, str]
    badges: tuple[str, ...]
    grade: int | None  # this annotator's grade
    others: Mapping[str, int] = field(default_factory=dict)  # other annotators' grades
    suggestions: tuple = ()  # machine judges' grades this annotator may see now (labeler_app.suggestions)
    suggested: bool = False  # a machine judge graded this pair (shown or, until they grade it, not)


@dataclass(frozen=True)
class LabelProgress:
    """My questions done out of all, the team's, and this question's candidates I judged."""

    n_questions: int
    n_complete: int  # the team's: done or unanswerable
    n_unanswerable: int
    judged: int
    candidates: int
    n_mine: int = 0  # questions I have judged or marked unanswerable myself

    @property
    def share(self) -> float:
        """My share of the questions done: what the progress bar shows."""
        return self.n_mine / self.n_questions if self.n_questions else 0.0

    @property
    def text(self) -> str:
        """The progress line under the question picker."""
        return (f"You: {self.n_mine} / {self.n_questions} questions judged · team: {self.n_complete} done "
                f"({self.n_unanswerable} unanswerable) · this question: {self.judged} / {self.candidates} "
                "candidates judged by you")


def _badge(name: str, rank: int) -> str:
    return f"{RETRIEVER_NAMES.get(name, name)} #{rank}"


def _view(corpus: Corpus, doc_id: str, badges: Sequence[str], terms: Sequence[str], grades: Mapping[str, int],
          annotator: str) -> CandidateView:
    others = {a: g for a, g in sorted(grades.items()) if a != annotator}
    doc = corpus.get(doc_id)
    if doc is None:
        return CandidateView(doc_id, inert(doc_id), inert("(not in this corpus)"), "", {}, tuple(badges),
                             grades.get(annotator), others)
    return CandidateView(doc_id, highlight_markup(doc.title or doc_id, terms),
                         highlight_markup(snippet(doc.text, terms), terms), doc.text,
                         {k: str(v) for k, v in doc.metadata.items()}, tuple(badges), grades.get(annotator), others)


def building_note(progress: str) -> str:
    """What the Label page says while the dense index of a big corpus is being built."""
    return (f"The dense index is still being built ({progress}). The candidates below come from BM25 only; "
            "dense candidates join them when it is ready — grades you give now are kept.")


def candidate_views(corpus: Corpus, pooled: Sequence[Candidate], status: QuestionStatus, annotator: str, *,
                    shuffle: bool = False) -> list[CandidateView]:
    """Pooled candidates (optionally in a stable shuffled order), then documents judged on this
    question that no retriever surfaced (added by search or by another annotator). Shuffled, a
    candidate's retriever badges ("dense #1") stay hidden until this annotator has graded it:
    they would give the ranking away, which is what shuffling hides. Every other annotator's grade
    is there: `judging_views` takes them out under blind judging."""
    question = status.question
    pooled = shuffled(pooled, question.query_id) if shuffle else list(pooled)
    grades: dict[str, dict[str, int]] = {}
    for j in status.judgments:
        grades.setdefault(j.doc_id, {})[j.annotator] = j.grade
    in_pool = {c.doc_id for c in pooled}
    shown = [(c.doc_id, [_badge(n, r) for n, r in c.found_by.items()]) for c in pooled]
    shown += [(doc_id, ["added"]) for doc_id in sorted(grades) if doc_id not in in_pool]
    terms = highlight_terms(question.question)
    if shuffle:
        shown = [(d, b if annotator in grades.get(d, {}) or b == ["added"] else ["shuffled"]) for d, b in shown]
    return [_view(corpus, doc_id, badges, terms, grades.get(doc_id, {}), annotator) for doc_id, badges in shown]


def judging_views(store: Store, actor: Actor, corpus: Corpus, pooled: Sequence[Candidate], status: QuestionStatus,
                  *, shuffle: bool = False) -> tuple[list[CandidateView], bool]:
    """The candidates as `actor` may see them, and True when others' grades are hidden from them
    (labeler_app.blind: until they have finished the question, no other annotator's grade shows, nor a
    document only others added; someone who may not grade judges nothing, so nothing is hidden)."""
    views = candidate_views(corpus, pooled, status, actor.name, shuffle=shuffle)
    finished = not hides_others(views, status, actor.name) if actor.can(Can.GRADE) else None
    if sees_others(store, actor, finished=finished):
        return views, False
    others_only = _others_only(views)
    return [replace(v, others={}) for v in views if v.doc_id not in others_only], True


def hides_others(views: Sequence[CandidateView], status: QuestionStatus, annotator: str) -> bool:
    """Under blind judging, True while `annotator` has not finished the question: finished means they
    graded every candidate shown to them, or marked the question unanswerable."""
    if status.votes_unanswerable(annotator):
        return False
    return not views or any(v.grade is None for v in views if v.doc_id not in _others_only(views))


def _others_only(views: Sequence[CandidateView]) -> set[str]:
    # documents that only others added (badge "added", no grade of mine): not shown while blind
    return {v.doc_id for v in views if v.badges == ("added",) and v.grade is None}


def search_results(corpus: Corpus, query: str, question: str, *, limit: int = 10) -> list[CandidateView]:
    """Keyword/id search hits rendered like candidates (no grades: the page looks those up)."""
    terms = highlight_terms(question + " " + query)
    return [CandidateView(d.doc_id, highlight_markup(d.title or d.doc_id, terms),
                          highlight_markup(snippet(d.text, highlight_terms(query) or terms), terms), d.text,
                          {k: str(v) for k, v in d.metadata.items()}, ("search",), None)
            for d in keyword_search(corpus, query, limit=limit)]


def other_hits(found: Sequence[CandidateView], shown: Sequence[CandidateView]) -> tuple[list[CandidateView], str]:
    """The search hits not already among the candidates, and what to say when there are none."""
    rank = {v.doc_id: i for i, v in enumerate(shown, start=1)}
    hits = [h for h in found if h.doc_id not in rank]
    if hits:
        return hits, ""
    if found:
        listed = ", ".join(f"{inert(h.doc_id)} (#{rank[h.doc_id]})" for h in found[:5])
        return [], f"Already among the candidates above: {listed}."
    return [], "No document matches every word."


def next_ungraded(views: Sequence[CandidateView], graded: str) -> int:
    """Where the focus goes after grading `graded`: the next card without my grade (wrapping
    round), else that same card."""
    at = next((i for i, v in enumerate(views) if v.doc_id == graded), 0)
    order = list(range(at + 1, len(views))) + list(range(0, at))
    return next((i for i in order if views[i].grade is None), at)


def mine_done(index: Sequence[QuestionSummary], mine: Mapping[str, int]) -> list[str]:
    """The questions this annotator has finished: judged at least one document, or marked
    unanswerable themselves (`mine`: store.judgments.judged_by, where such a question counts 0 documents)."""
    return [s.query_id for s in index if s.query_id in mine]


def first_unfinished(index: Sequence[QuestionSummary], mine: Mapping[str, int]) -> str | None:
    """Where an annotator starts: their first question not yet finished (None when all are)."""
    done = set(mine_done(index, mine))
    return next((s.query_id for s in index if s.query_id not in done), None)


def label_progress(index: Sequence[QuestionSummary], views: Sequence[CandidateView],
                   mine: Mapping[str, int] | None = None) -> LabelProgress:
    """Counts for the progress line of the Label page (`mine`: store.judgments.judged_by for this annotator)."""
    return LabelProgress(len(index), sum(1 for s in index if s.status.complete),
                         sum(1 for s in index if s.status == Status.UNANSWERABLE),
                         sum(1 for v in views if v.grade is not None), len(views),
                         len(mine_done(index, mine or {})))


def question_choice_label(query_id: str, status: Status, text: str) -> str:
    """`q-0003 ✓ How many…` for the question pickers."""
    return f"{query_id} {STATUS_MARKS[status]} {text[:70]}{'…' if len(text) > 70 else ''}"


# Offered from the first question on (the demo golden set's types); typing a new one is always possible.
STARTER_QUERY_TYPES = ("policy-lookup", "eligibility", "numeric-fact", "how-to", "troubleshooting")


def query_types(index: Sequence[QuestionSummary]) -> list[str]:
    """Query types in use, most used first (then by name), then the starter types not in use."""
    counts: dict[str, int] = {}
    for s in index:
        if s.query_type:
            counts[s.query_type] = counts.get(s.query_type, 0) + 1
    return sorted(counts, key=lambda t: (-counts[t], t)) + [t for t in STARTER_QUERY_TYPES if t not in counts]


def unanswerable_notes(status: QuestionStatus, annotator: str, *, hidden: bool = False) -> list[tuple[str, str]]:
    """What the judging area says about "unanswerable" for this annotator: (kind, markdown) pairs,
    kind "warning" (their own vote) or "info" (others' votes, a disagreement); `hidden` (blind
    judging, not finished): only the blind note and their own vote."""
    mine = status.votes_unanswerable(annotator)
    if hidden:
        return [("info", BLIND_NOTE)] + ([("warning", UNANSWERABLE_NOTE)] if mine else [])
    others = [inert(a) for a in status.voters if a != annotator]
    notes = [("warning", UNANSWERABLE_NOTE)] if mine else []
    if others:
        who = ", ".join(others)
        notes.append(("info", f"Also marked unanswerable by {who}." if mine else
                      f"Marked unanswerable by {who}. Judge it yourself: your grades and your mark are your own."))
    said = status.unanswerable_disagreement
    if said:
        relevant = [a for a, v in said.items() if v == "answerable"]
        if annotator in relevant:  # addressed to you: your own grade is the one disagreeing
            also = "".join(f", {inert(a)}" for a in relevant if a != annotator)
            voters = ", ".join(inert(a) for a in status.voters) or "others"
            notes.append(("info", f"Disagreement: you{also} graded a document relevant, so the team's consensus is "
                                  f"**answerable**, while {voters} marked it unanswerable."))
        else:
            notes.append(("info", f"Disagreement: {', '.join(inert(a) for a in relevant)} graded a document "
                                  "relevant, so the team's consensus is **answerable**. To disagree, grade that "
                                  "document 0."))
    return notes


def status_line(status: QuestionStatus, *, hidden: bool = False, candidates: Sequence[str] = ()) -> str:
    """Type and status badges and the id, as markdown (the type is user text, made inert); unless
    others' labels are `hidden` (blind judging), why it has its status (labeler.status, counting the
    `candidates` on screen nobody judged) and how many documents an adjudicator settled."""
    q = status.question
    type_badge = f":violet-badge[{inert(q.query_type)}] " if q.query_type else ""
    n = 0 if hidden else len(status.adjudicated)  # final grades: they outweigh the consensus
    settled = f" · {n} document{'s' if n != 1 else ''} adjudicated" if n else ""
    grades = {**status.consensus, **status.adjudicated}
    people = status.annotators  # grade sources left out
    why = "" if hidden else " · " + status_reason(status.status, grades, n_annotators=len(people),
                                                  candidates=tuple(candidates))
    return f"{type_badge}{STATUS_BADGES[status.status]} · {inert_code(q.query_id)}{why}{settled}"


# --------------------------------------------------------------------------- actions


def _as_asked(text: str) -> str:
    """A question as `add_question` compares it with the others: case and spacing aside."""
    return " ".join(text.split()).casefold()


def add_question(store: Store, corpus: Corpus, actor: Actor, text: str, query_type: str = "") -> str:
    """Write a new question against the open corpus, as `actor`; its query id. A question the collection
    already has (case and spacing aside) is refused, naming it."""
    actor.require(Can.WRITE_QUESTION)
    if not text.strip():
        raise InputError("the question is empty", hint="write the question first.")
    try:
        asked = store.questions.index()
    except InputError:  # no such collection yet: this question creates it
        asked = []
    if twin := next((x for x in asked if _as_asked(x.question) == _as_asked(text)), None):
        # One question asked twice splits its judgments in two; and an Add sent twice (a click on the old page
        # brought the form back with the text in it) made a copy nobody asked for.
        raise InputError(f"that question is already {twin.query_id}",
                         hint="pick it in the question box, or word the new one differently.")
    q = store.questions.add(text.strip(), query_type=(query_type or "").strip(), author=actor.name,
                           corpus_fingerprint=corpus.fingerprint)
    return q.query_id


def grade(store: Store, actor: Actor, query_id: str, doc_id: str, grade: int | None,
          corpus: Corpus | None = None, *, shown: CandidateView | None = None) -> None:
    """Save the actor's grade of a document (None clears it), at once; a replaced grade goes to the
    history. The grade keeps the content hash of the document as `corpus` shows it, and renews the
    actor's claim on the question (storage does both in the grade's transaction). `shown`: the card
    as the actor saw it; when a machine judge graded the pair, the first sight of its suggestion is
    recorded with the actor's grade then (the one they had if it was in view, else this one, since
    it shows from now on: labeler_app.suggestions)."""
    actor.require(Can.GRADE)
    if grade is None:
        store.judgments.clear(query_id, doc_id, annotator=actor.name)
        return
    store.judgments.set(query_id, doc_id, grade, annotator=actor.name,
                       doc=corpus.get(doc_id) if corpus is not None else None)
    if shown is not None and shown.suggested:
        store.machine.record_seen(query_id, doc_id, actor.name, shown.grade if shown.suggestions else grade)


def next_for_me(store: Store, actor: Actor, give_back: str | None = None, doc_ids: Sequence[str] = ()) -> str | None:
    """Claim the question the actor should judge next from the shared queue (labeler_storage.work_queue):
    its query id, or None when no question wants another judge. With `give_back`, first release
    their claim on a question they will not judge (too hard, not their field), which this pick
    then passes over. With the corpus's `doc_ids`, questions some annotator's stopping estimate calls
    likely complete (labeler_app.judging_order) come only after every other open question."""
    actor.require(Can.GRADE)
    from labeler_app.judging_order import likely_complete  # it builds on this module
    from labeler_app.queue_order import priorities  # the team's queue order (it reads machine grades)

    last = [s.question.query_id for s in store.questions.list() if s.judgments and likely_complete(s, doc_ids)] \
        if doc_ids else []
    return store.queue.next(actor.name, give_back=give_back, first=priorities(store), last=last)


def claim_note(store: Store, actor: Actor, query_id: str) -> str | None:
    """"Yours until 12:40 UTC …" when the actor holds a live claim on the question, else None."""
    until = store.queue.claim_expiry(query_id, actor.name) if actor.name else None
    if until is None:
        return None
    return (f"You hold this question in the queue until {until[11:16]} UTC (each grade renews it), so no one else "
            "is sent to it meanwhile.")


def set_unanswerable(store: Store, actor: Actor, query_id: str, value: bool) -> None:
    """Mark (or unmark) a question as having no answer in the corpus."""
    actor.require(Can.GRADE)
    store.questions.set_unanswerable(query_id, value, by=actor.name)
