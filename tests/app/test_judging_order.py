"""The Label page's judging order (labeler_app.judging_order) on the sample corpus: most likely relevant
first, "Find more" beyond the pool, the stopping sample and its estimate, blind judging."""
from __future__ import annotations

import html
import re

import numpy as np
import pytest
from browser_support import app_home, grade_card, open_app, sample_embeddings, submit_question, texts  # noqa: F401 - fixtures

from labeler.candidates import pool_candidates
from labeler.config import RunConfig
from labeler.corpus import load_corpus
from labeler.judging import CorpusText, question_features
from labeler.judging.features import retriever_scores
from labeler.paths import SAMPLE_CORPUS
from labeler_app import judging_order as jo
from labeler_storage import open_store

QUESTION = "How many vacation days do new employees get?"


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    """The sample corpus with its BM25 index, tf-idf and the question's features (BM25 only: cheap, real)."""
    from labeler.retrieval import Retriever

    corpus = load_corpus(SAMPLE_CORPUS)
    retriever = Retriever(corpus, RunConfig().build(), cache_root=tmp_path_factory.mktemp("cache")).prepare("bm25")
    features = question_features(CorpusText.of(corpus), QUESTION, retriever_scores(retriever, [QUESTION], dense=False)[0])
    pool = [c.doc_id for c in pool_candidates(retriever, QUESTION, k_dense=0)]
    return corpus, features, pool


def lay_out(features, pool, mine, previous=None, **kw):
    return jo.arrange(previous, pool, mine, jo.model_order(features, "q-1", mine), **kw)


def test_judging_order_reorders_the_ungraded_cards_after_a_relevant_grade(sample):
    _, features, pool = sample
    first = lay_out(features, pool, {})
    assert sorted(first.doc_ids) == sorted(pool)
    assert lay_out(features, pool, {}, first) is first  # nothing changed: the model is not asked again
    # The second card judged relevant, the first not: both keep their places, the rest is ordered anew.
    a, b = first.doc_ids[:2]
    after = lay_out(features, pool, {a: 0, b: 3}, first, focus=1)
    assert after.doc_ids[:2] == (a, b)
    assert sorted(after.doc_ids) == sorted(pool)
    assert after.doc_ids[2:] != first.doc_ids[2:]  # the grade moved the model
    assert after.doc_ids[2:] == tuple(jo.model_order(features, "q-1", {a: 0, b: 3})(list(after.doc_ids[2:])))


def test_judging_order_keeps_graded_cards_and_those_above_the_last_grade_in_place():
    def rank(ungraded):  # a model that ranks by doc id, reversed
        return sorted(ungraded, reverse=True)

    cards = ["a", "b", "c", "d", "e", "f"]
    first = jo.arrange(None, cards, {}, rank)
    assert first.doc_ids == ("f", "e", "d", "c", "b", "a")
    # "d" (third card) graded by a click: "f" and "e" above it stay although ungraded, "d" stays;
    # the ungraded after it are ranked anew; "b" was graded earlier and keeps its slot.
    graded = jo.arrange(first, cards, {"b": 1}, rank)
    again = jo.arrange(graded, cards, {"b": 1, "d": 2}, lambda u: sorted(u), focus=4)
    assert again.doc_ids[:3] == graded.doc_ids[:3]
    assert again.doc_ids[graded.doc_ids.index("b")] == "b"
    cleared = jo.arrange(again, cards, {"b": 1}, rank)  # an undo: the card stays where it was
    assert cleared.doc_ids.index("d") == again.doc_ids.index("d")
    # A fresh session (no earlier layout): the graded cards where the pool has them, the model's order between.
    assert jo.arrange(None, cards, {"d": 2, "b": 1}, rank).doc_ids == ("f", "b", "e", "d", "c", "a")
    # A new card (Find more) joins the ungraded cards after the focus, by the model.
    more = jo.arrange(again, [*cards, "z"], {"b": 1, "d": 2}, rank, focus=0)
    assert more.doc_ids[0] == again.doc_ids[0] and sorted(more.doc_ids) == sorted([*cards, "z"])


def test_judging_order_find_more_brings_documents_no_retriever_pooled(sample):
    corpus, features, pool = sample
    mine = {pool[0]: 3, pool[1]: 0}
    more = jo.find_more(features, "q-1", mine, pool)
    ids = [d for d, _ in more]
    assert len(ids) == jo.FIND_MORE + 1 and len(set(ids)) == len(ids)  # the model's five, BM25's next
    assert not set(ids) & set(pool) and all(corpus.get(d) for d in ids)
    assert all(badges[0] == jo.FOUND_BADGE for _, badges in more)
    [(bm25_doc, bm25_badges)] = [(d, badges) for d, badges in more if len(badges) == 2]
    by_bm25 = [features.doc_ids[p] for p in np.argsort(-features.scores["bm25"], kind="stable")]
    rank = int(bm25_badges[1].removeprefix("BM25 #"))
    # BM25's best past its top 10 that the model did not bring in already
    assert rank > len(pool) and by_bm25[rank - 1] == bm25_doc and set(by_bm25[len(pool):rank - 1]) <= set(ids)
    again = jo.find_more(features, "q-1", mine, [*pool, *ids])
    assert not {d for d, _ in again} & {*pool, *ids}  # a second press brings the next ones


def grade_all(store, qid, grades):
    for doc_id, grade in grades:
        store.judgments.set(qid, doc_id, grade, annotator="asha")


def test_judging_order_stopping_sample_is_reproducible_and_bounds_what_is_left(sample, tmp_path, monkeypatch):
    corpus, features, pool = sample
    from datetime import datetime, timedelta, timezone

    ticks = iter(range(10**6))  # one second per write: the order given is the order written
    url = tmp_path / "labeler.db"
    store = open_store(url)
    start = datetime(2026, 12, 1, tzinfo=timezone.utc)
    store.clock = lambda: start + timedelta(seconds=next(ticks))  # the store's one clock
    qid = store.questions.add(QUESTION, author="asha").query_id
    other = store.questions.add("Who approves travel?", author="asha").query_id
    ids = features.doc_ids
    docs = pool + [d for d in ids if d not in pool]  # the order judged: the pool's first
    # One relevant document, then nine not: one short of the knee (ten in a row without a relevant one).
    grade_all(store, qid, [(docs[0], 2)] + [(d, 0) for d in docs[1:10]])
    before = jo.stopping(store.questions.status(qid), "asha", ids)
    assert before.knee_at is None and before.streak == 9 and "after 1 more grade" in before.note
    grade_all(store, qid, [(docs[10], 0)])
    at_knee = jo.stopping(store.questions.status(qid), "asha", ids)
    assert at_knee.knee_at == 11 and len(at_knee.sample) == jo.RULE.sample_size
    assert not set(at_knee.sample) & set(docs[:11])  # drawn from what was not judged yet
    assert "judge the 20 cards marked *random sample* (0 of 20 judged)" in at_knee.note
    grade_all(store, other, [(d, 1) for d in docs[:5]])  # another question changes: the sample does not
    grade_all(store, qid, [(at_knee.sample[0], 0)])  # nor does judging it
    reopened = jo.stopping(open_store(url).questions.status(qid), "asha", ids)  # nor a restart
    assert reopened.sample == at_knee.sample and reopened.sample_judged == 1
    assert jo.stopping(store.questions.status(qid), "ben", ids).knee_at is None  # someone else's grades are not mine
    grade_all(store, qid, [(d, 0) for d in at_knee.sample[1:]])
    done = jo.stopping(store.questions.status(qid), "asha", ids)
    # Nothing relevant in 20 of the 105 documents not judged at the knee: the exact hypergeometric
    # bound allows at most 13 relevant among them: P(X = 0 | N=105, R=13, n=20) = 0.053 > 5%, with R=14 0.041.
    assert done.estimate is not None and done.estimate.unjudged == len(ids) - 11
    assert done.left_upper == done.estimate.upper == 13 and not done.likely_complete
    assert "about 0.0 relevant documents left unjudged, ≤ 13 (95%)" in done.note
    # A relevant document found after the knee outside the sample comes off the bound.
    outside = next(d for d in ids if d not in set(docs[:11]) | set(at_knee.sample))
    grade_all(store, qid, [(outside, 3)])
    assert jo.stopping(store.questions.status(qid), "asha", ids).left_upper == 12


def test_judging_order_gain_curve_claims_likely_complete_after_three_checks_in_a_row(sample, tmp_path):
    """The gain curve of the annotator's own judging order (the sample left out) says "<= 1 left" only once
    three checks in a row, ten judgments apart, said so; the sample's bound stays beside it, and a relevant
    grade after its last check withdraws the claim until new checks confirm it."""
    from datetime import datetime, timedelta, timezone

    corpus, features, pool = sample
    ticks = iter(range(10**6))
    store = open_store(tmp_path / "labeler.db")
    start = datetime(2026, 12, 1, tzinfo=timezone.utc)
    store.clock = lambda: start + timedelta(seconds=next(ticks))
    qid = store.questions.add(QUESTION, author="asha").query_id
    ids = features.doc_ids
    docs = pool + [d for d in ids if d not in pool]
    grade_all(store, qid, [(docs[0], 2), (docs[1], 2)] + [(d, 0) for d in docs[2:12]])  # the knee at 12
    sample = jo.stopping(store.questions.status(qid), "asha", ids).sample
    grade_all(store, qid, [(d, 0) for d in sample])
    rest = iter(d for d in docs[12:] if d not in set(sample))

    def after(n):
        grade_all(store, qid, [(next(rest), 0) for _ in range(n)])
        return jo.stopping(store.questions.status(qid), "asha", ids)

    # Checks at 32, 42, 52, 62, 72 grades: the exponential's bound 17, 2, 1, 0, 0 (by hand: curve_remaining).
    first = after(0)
    assert first.curve.upper == 17 and first.curve_checks == (False,) and not first.likely_complete
    assert "The gain curve of your judging order: ≤ 17 left (95%)." in first.note
    two = after(30)  # checks at 52 and 62 said "<= 1 left": two of the three needed
    assert two.curve_checks == (False, True, True) and not two.curve_claim and not two.likely_complete
    assert "at 2 of the 3 checks in a row it needs" in two.note and "≤ 13 (95%), from a random sample of 20" in two.note
    done = after(10)
    assert done.curve_claim and not done.sample_claim and done.likely_complete and done.left_upper > 1
    assert done.note.startswith("**Likely complete**: ≤ 0 relevant documents left (95%), by the gain curve of your "
                                "judging order (three checks in a row, 10 judgments apart, found nothing relevant)")
    assert f"bounds them at ≤ {done.left_upper} (95%)" in done.note  # the sample's bound beside it
    assert jo.likely_complete(store.questions.status(qid), ids)  # the queue and the health line read it too
    grade_all(store, qid, [(next(rest), 2)])  # something relevant after all: no claim until new checks
    assert not jo.stopping(store.questions.status(qid), "asha", ids).likely_complete


def test_judging_order_likely_complete_when_the_bound_allows_at_most_one():
    est = jo.estimate_remaining(30, [0] * 28)  # 28 of 30 judged, nothing relevant: at most 1 left in the 2
    stop = jo.Stopping(judged=40, streak=40, knee_at=12, sample=tuple("x" * 28), sample_judged=28, estimate=est)
    assert stop.likely_complete and stop.note.startswith("**Likely complete**: ≤ 1 relevant document left (95%)")


def card_badges(at) -> list[list[str]]:
    """Each candidate card's badges, as read (inert's character references undone)."""
    cards = [m.value for m in at.markdown if "<small><code>" in m.value]
    titles = [next(part for part in c.split("\n\n") if re.search(r"\*\*\d+\. ", part)) for c in cards]
    return [[html.unescape(b) for b in re.findall(r"-badge\[([^\]]*)\]", t)] for t in titles]


def test_judging_order_blind_judging_shows_no_model_rank_nor_retriever_rank(app_home):
    at = open_app(annotator="asha")
    submit_question(at, QUESTION)
    grade_card(at, 0, 2)
    shown = [b for h in card_badges(at) for b in h]
    assert "model #1" in shown and any(b.startswith(("BM25 #", "dense #")) for b in shown)
    open_store().accounts.set_setting("blind", True)
    at.run()
    headers = card_badges(at)
    assert not any("model #" in b for h in headers for b in h)
    assert not any("#" in b for h in headers[1:] for b in h), headers  # the ungraded cards give no rank away
    assert any(re.match(r"(BM25|dense) #\d", b) for b in headers[0]), headers  # the graded one may
    at.button(key="find-more").click().run()
    assert not at.exception, at.exception
    found = [h for h in card_badges(at) if jo.FOUND_BADGE in h]
    assert len(found) == jo.FIND_MORE + 2 and not any("#" in b for h in found for b in h)  # five, dense's and BM25's next
    assert any("found beyond the pool" in m for m in texts(at.success))


def test_judging_order_cards_beyond_the_pool_are_marked_as_such(sample, tmp_path):
    corpus, _, pool = sample
    store = open_store(tmp_path / "labeler.db")
    qid = store.questions.add(QUESTION, author="asha").query_id
    store.judgments.set(qid, "travel-001", 1, annotator="asha")  # a found card graded: judged, not pooled
    status = store.questions.status(qid)
    from labeler.candidates import Candidate
    from labeler_app.label import candidate_views

    views = candidate_views(corpus, [Candidate(d, {"bm25": i}) for i, d in enumerate(pool, 1)], status, "asha")
    extra = jo.extra_views(corpus, status, "asha", ["travel-001", "payroll-001", pool[0]], views, hidden=True)
    assert [v.doc_id for v in extra] == ["payroll-001"]  # the graded one and the pooled one are cards already
    found = {"travel-001": (jo.FOUND_BADGE,), "payroll-001": (jo.FOUND_BADGE, "BM25 #14")}
    marked = {v.doc_id: v.badges for v in jo.mark([*views, *extra], found, sample=[pool[1], "payroll-001"])}
    assert marked["travel-001"] == (jo.FOUND_BADGE,)  # not "added": where it came from stays said
    assert marked["payroll-001"] == (jo.FOUND_BADGE, "BM25 #14", jo.SAMPLE_BADGE)
    assert marked[pool[1]] == ("BM25 #2", jo.SAMPLE_BADGE)
    assert jo.without_ranks([v for v in jo.mark(extra, found, ()) if v.doc_id == "payroll-001"])[0].badges == (jo.FOUND_BADGE,)


def test_judging_order_counts_the_scored_questions_resting_on_incomplete_judging(tmp_path):
    from conftest import import_demo

    store = open_store(tmp_path / "labeler.db")
    import_demo(store)  # 62 questions graded in a file: no judging order, no estimate
    imported = "q-0001"
    ids = [f"d{i:02d}" for i in range(25)]
    done, half = (store.questions.add(f"Question {n}?", author="asha").query_id for n in range(2))
    grade_all(store, done, [("d00", 2)] + [(d, 0) for d in ids[1:11]])  # the knee: 10 in a row after a relevant one
    sample = jo.stopping(store.questions.status(done), "asha", ids).sample
    assert sorted(sample) == ids[11:]  # 14 left, fewer than 20: the sample is all of them
    grade_all(store, done, [(d, 0) for d in sample])
    assert jo.stopping(store.questions.status(done), "asha", ids).note.startswith("**Likely complete**: ≤ 0 relevant")
    grade_all(store, half, [("d03", 1)])
    statuses = store.questions.list()
    by_id = {s.question.query_id: s for s in statuses}
    assert by_id[imported].judgments and not jo.likely_complete(by_id[imported], ids)
    assert [jo.likely_complete(by_id[q], ids) for q in (done, half)] == [True, False]
    assert jo.incomplete_judging(statuses, ids, [done, imported, half]) == 2
    assert jo.incomplete_judging(statuses, ids, [done]) == 0 and jo.incomplete_note(0, 1) == ""
    assert jo.incomplete_note(2, 3).startswith("2 of 3 scored questions rest on incomplete judging")


def test_judging_order_queue_offers_likely_complete_questions_last(tmp_path):
    from labeler_app.access import Actor, Role
    from labeler_app.label import next_for_me

    store = open_store(tmp_path / "labeler.db")
    store.accounts.set_setting("overlap", 2)
    ids = [f"d{i:02d}" for i in range(25)]
    done, other = (store.questions.add(f"Question {n}?", author="asha").query_id for n in range(2))
    grade_all(store, done, [("d00", 2)] + [(d, 0) for d in ids[1:11]])
    grade_all(store, done, [(d, 0) for d in jo.stopping(store.questions.status(done), "asha", ids).sample])
    assert jo.likely_complete(store.questions.status(done), ids)
    bob = Actor("bob", Role.ANNOTATOR)
    # Without the corpus the queue sends bob to the question closest to full: asha's, likely complete.
    assert next_for_me(store, bob) == done
    store.queue.release(done, "bob")
    assert next_for_me(store, bob, doc_ids=ids) == other  # the likely complete one waits until nothing else does
    grade_all(store, other, [("d01", 1)])
    store.judgments.set(other, "d01", 1, annotator="bob")
    assert next_for_me(store, bob, doc_ids=ids) == done  # still offered, last: overlap wants a second judge
