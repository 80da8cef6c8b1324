"""The grade route (pages/_grade_route.py) on a real SQLite database, through Starlette's TestClient: a
ticket a run of the judging area minted writes one grade once, through the click's use case (history
kept, the user's name on it), and every other request is refused with nothing written — another site,
a body past the cap, a ticket used, expired, unknown or of a closed session, a card not on the page, a
user the re-check no longer finds (disabled: their session ended) or a role that may not grade."""
from __future__ import annotations

import json

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from conftest import rows
from labeler.corpus import parse_jsonl_corpus
from labeler_app import accounts as acc
from labeler_app import label as lb
from labeler_app.access import Actor, Role, local_actor
from labeler_app.label import CandidateView
from labeler_pages import _grade_route as gr
from labeler_storage import open_store

CORPUS = parse_jsonl_corpus("\n".join(json.dumps({"doc_id": f"d{i}", "title": f"Doc {i}", "text": f"vacation days {i}"})
                                      for i in range(1, 4)))
SAME_SITE = {"Origin": "http://testserver"}
ANN = local_actor("ann")
THIS_CLIENT = acc.client_fingerprint("testclient", {"user-agent": "testclient"})  # TestClient's peer and agent


@pytest.fixture
def store(tmp_path):
    with open_store(f"sqlite:///{tmp_path / 'labeler.db'}") as s:
        yield s


@pytest.fixture
def open_sessions():
    return {"tab-1"}


@pytest.fixture
def http(open_sessions):
    with TestClient(Starlette(routes=gr.routes(alive=lambda sid: sid in open_sessions))) as client:
        yield client


def _question(store) -> str:
    return store.questions.add("How many vacation days?", author="ann").query_id


def _ticket(store, qid: str, recheck=lambda fingerprint: ANN, session: str = "tab-1") -> str:
    # cards d1, d2, d3 in that order; d2 shows the grade 1 it has
    cards = [CandidateView(doc, doc, "", "", {}, (), grade) for doc, grade in (("d1", None), ("d2", 1), ("d3", None))]
    return gr.mint(session, store, CORPUS, qid, cards, recheck)


def _post(http, ticket: str, card: int, grade: int, headers=SAME_SITE):
    return http.post(gr.GRADE_ROUTE, content=json.dumps({"ticket": ticket, "card": card, "grade": grade}),
                     headers=headers)


def _grades(store) -> list[tuple]:
    return rows(store, "SELECT doc_id, annotator, grade FROM judgments ORDER BY doc_id")


def test_grade_route_writes_the_grade_once_through_the_use_case(store, http):
    qid = _question(store)
    lb.grade(store, ANN, qid, "d2", 1, CORPUS)
    ticket = _ticket(store, qid)
    assert _post(http, ticket, 1, 3).status_code == 204  # card 2 (d2): 1 -> 3
    assert _grades(store) == [("d2", "ann", 3)]
    [old, new] = store.judgments.history(qid)
    assert (old.grade, old.replaced_by, old.change, new.grade, new.replaced_at) == (1, "ann", "regraded", 3, None)
    assert store.judgments.list(query_id=qid)[0].doc_hash == CORPUS.get("d2").content_hash  # as the click keeps it
    assert gr.written_ahead("tab-1", qid, "d2", 3) and not gr.written_ahead("tab-1", qid, "d2", 3)  # the click's, once
    assert _post(http, ticket, 0, 2).status_code == 403  # used: the rerun mints the next
    assert _grades(store) == [("d2", "ann", 3)]


def test_grade_route_refuses_other_sites_big_bodies_and_bad_requests(store, http):
    qid = _question(store)
    ticket = _ticket(store, qid)
    assert _post(http, ticket, 0, 2, headers={"Origin": "http://evil.example"}).status_code == 403
    assert _post(http, ticket, 0, 2, headers={}).status_code == 403
    big = http.post(gr.GRADE_ROUTE, content=b"{" + b" " * gr.MAX_BODY + b"}", headers=SAME_SITE)
    assert big.status_code == 413
    for body in (b"not json", b"[]", json.dumps({"ticket": ticket, "card": 0, "grade": 4}).encode(),
                 json.dumps({"ticket": ticket, "card": "0", "grade": 2}).encode(),
                 json.dumps({"ticket": ticket, "card": 0, "grade": True}).encode()):
        assert http.post(gr.GRADE_ROUTE, content=body, headers=SAME_SITE).status_code == 400
    assert _post(http, "x" * 43, 0, 2).status_code == 403  # unknown
    assert _grades(store) == []
    assert _post(http, ticket, 0, 2).status_code == 204  # none of the refusals used it up


def test_grade_route_refuses_a_card_not_on_the_page_a_closed_tab_and_a_stale_ticket(store, http, open_sessions,
                                                                                     monkeypatch):
    qid = _question(store)
    assert _post(http, _ticket(store, qid), 3, 2).status_code == 403  # three cards: 0, 1, 2
    ticket = _ticket(store, qid)
    assert _post(http, _ticket(store, qid), 0, 2).status_code == 204 and _post(http, ticket, 0, 1).status_code == 403
    open_sessions.clear()  # the tab was closed
    assert _post(http, _ticket(store, qid), 0, 1).status_code == 403
    open_sessions.add("tab-1")
    stale = _ticket(store, qid)
    monkeypatch.setattr(gr, "TICKET_LIFETIME", -1.0)
    assert _post(http, stale, 0, 1).status_code == 403
    assert _grades(store) == [("d1", "ann", 2)]


def test_grade_route_rechecks_the_user_on_every_request(store, http):
    qid = _question(store)
    store.accounts.add_user("ann@example.org", "annotator", password="correct horse battery", by="(test)")
    token = store.accounts.sign_in("ann@example.org", "correct horse battery", client=THIS_CLIENT).token
    seen = []

    def recheck(fingerprint: str):  # as pages/_auth.py route_recheck does for a password sign-in
        seen.append(fingerprint)
        return acc.resume(store, token) if fingerprint == THIS_CLIENT else None

    assert _post(http, _ticket(store, qid, recheck), 0, 2).status_code == 204
    assert seen == [THIS_CLIENT] and _grades(store) == [("d1", "ann@example.org", 2)]
    store.accounts.update_user("ann@example.org", disabled=True, by="(test)")
    assert _post(http, _ticket(store, qid, recheck), 1, 3).status_code == 403
    assert _post(http, _ticket(store, qid, lambda fp: Actor("vic", Role.VIEWER, team=True)), 1, 3).status_code == 409
    assert _grades(store) == [("d1", "ann@example.org", 2)]
