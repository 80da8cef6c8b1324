"""AppTest: the Label page shows a machine judge's grade on a card only once the annotator has graded it
(the team's default), escaped, and records what they saw (issue 23, item 5)."""
from __future__ import annotations

import html

from browser_support import app_home, grade_card, open_app, sample_embeddings  # noqa: F401 - fixtures

from labeler.corpus import load_corpus
from labeler.paths import SAMPLE_CORPUS
from labeler_storage.store import open_store

HOSTILE = '<img src=x onerror="alert(1)">'


def _cards(at) -> list[str]:
    return [m.value for m in at.markdown if "<small><code>" in m.value]


def _doc(card: str) -> str:
    return html.unescape(card.split("<small><code>")[1].split("</code>")[0])


def test_label_page_shows_a_suggestion_only_after_the_annotators_grade_and_records_it(app_home):
    open_app()  # first start: the sample corpus and its version are recorded
    corpus = load_corpus(SAMPLE_CORPUS)
    with open_store() as s:
        qid = s.questions.add("How many vacation days do new employees get?", author="asha").query_id
        s.machine.save_grades([dict(query_id=qid, doc_id=d.doc_id, grade=2, judge=judge, doc_hash=d.content_hash,
                                    at="2026-01-01T00:00:00Z") for d in corpus.documents[:4] for judge in ("umb", HOSTILE)])
    graded = {d.doc_id for d in corpus.documents[:4]}
    at = open_app(annotator="asha")
    cards = _cards(at)
    assert not any("machine suggestion" in c for c in cards)  # blind to it before her own grade
    assert graded <= {_doc(c) for c in cards}  # the judge's pairs are on the page, pooled or not
    n = next(i for i, c in enumerate(cards) if _doc(c) in graded)
    grade_card(at, n, 0)
    assert not at.exception, at.exception
    after = {_doc(c): c for c in _cards(at)}
    first, rest = after.pop(_doc(cards[n])), list(after.values())
    assert "machine suggestion" in first and "**umb** 2 · Relevant" in first
    assert HOSTILE not in first and HOSTILE in html.unescape(first).replace("\u2060", "")  # shown as text, never HTML
    assert not any("machine suggestion" in c for c in rest)
    with open_store() as s:
        seen = s.machine.seen()
    assert sorted((x.judge, x.machine_grade, x.grade_before, x.grade_now) for x in seen) == [
        (HOSTILE, 2, 0, 0), ("umb", 2, 0, 0)]
    at.switch_page("../pages/judges.py").run()
    assert not at.exception, at.exception
    table = next(d.value for d in at.dataframe if "post-edited" in d.value.columns)
    assert sorted(table["judge"]) == sorted([HOSTILE, "umb"])
    assert list(table["seen"]) == [1, 1] and list(table["blind"]) == [1, 1] and list(table["post-edited"]) == [0, 0]
