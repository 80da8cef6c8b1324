"""AppTest: after FLOOR grades on a question, the Label page names where judging is likely to find more
(labeler_app.spread) and its button goes there."""
from __future__ import annotations

from browser_support import app_home, grade_card, open_app, sample_embeddings  # noqa: F401 - fixtures
from test_label_page import add_question, card_ids

from labeler_app.spread import FLOOR
from labeler_storage.store import open_store

SECOND = "What is the office policy on keeping pet snakes at my desk?"


def _hint(at) -> str:
    return next((m.value for m in at.info if "likely to find more elsewhere" in m.value), "")


def test_label_spread_hint_after_the_floor_goes_to_the_other_question(app_home):
    at = add_question(open_app(annotator="asha"))
    at = add_question(at, SECOND, "policy-lookup")  # q-0002 is on screen, q-0001 has no grade of asha's
    cards = card_ids(at)
    assert len(cards) >= FLOOR
    store = open_store()
    for doc_id in cards[1:FLOOR]:  # FLOOR - 1 grades already given, none relevant
        store.judgments.set("q-0002", doc_id, 0, annotator="asha")
    at.run()
    assert not _hint(at)  # under the floor: nothing said
    grade_card(at, 0, 0)
    hint = _hint(at)
    assert "found nothing relevant" in hint and "not graded yet" in hint, [m.value for m in at.info]
    assert "How many vacation days" in hint  # the question it names, as plain text
    at.button(key="spread-go").click().run()
    assert not at.exception, at.exception
    assert at.session_state["q"] == "q-0001"
    assert any("How many vacation days" in h.value for h in at.subheader)
    assert not _hint(at)
