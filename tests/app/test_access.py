"""The role matrix, enforced in the app layer: every write function called directly (no page) as a
viewer, an annotator and an admin either works or raises AccessDenied — and then wrote nothing
(on SQLite and on PostgreSQL).

The matrix below is written out by hand from app/access.py's docstring, not derived from
PERMISSIONS, so a change to either shows up here.
"""
from __future__ import annotations

import io
import json
from types import SimpleNamespace

import pytest

from labeler_app import corpus as app_corpus
from labeler_app import golden_set as gs
from labeler_app import adjudicate, label, systems
from labeler_app.access import PERMISSIONS, Actor, Can, Role, local_actor
import labeler_app.accounts as acc
from labeler_app.evaluate import run_evaluation
from labeler_app.workspace import load_demo_golden, use_corpus
from conftest import rows, snapshot
from labeler.config import RunConfig
from labeler.corpus import parse_jsonl_corpus
from labeler.errors import AccessDenied, InputError
from labeler.paths import SAMPLE_CORPUS
from labeler_storage import open_store

VIEWER = Actor("vic@example.org", Role.VIEWER, team=True)
ANNOTATOR = Actor("ann@example.org", Role.ANNOTATOR, team=True)
OTHER = Actor("bob@example.org", Role.ANNOTATOR, team=True)
ADMIN = Actor("boss@example.org", Role.ADMIN, team=True)
ACTORS = {"viewer": VIEWER, "annotator": ANNOTATOR, "admin": ADMIN}
TINY = "\n".join(json.dumps({"doc_id": f"d{i}", "title": f"Doc {i}", "text": f"vacation days policy number {i}"})
                 for i in range(1, 5))
GOLDEN = (json.dumps({"query_id": "g-1", "question": "How many vacation days?", "relevance": {"d1": 2, "d2": 0}})
          + "\n").encode()

# Hand-written from the docstring of app/access.py.
MATRIX = {
    Role.VIEWER: {Can.READ, Can.EXPORT},
    Role.ANNOTATOR: {Can.READ, Can.EXPORT, Can.WRITE_QUESTION, Can.GRADE, Can.EDIT_OWN_QUESTION,
                     Can.RUN_EVALUATION},
    Role.ADMIN: set(Can),
}


@pytest.fixture
def ws(tmp_path, db_url):
    """A store (on each engine) with a question by the annotator (q-ann) and one by the admin (q-boss)."""
    store = open_store(db_url, synchronous="NORMAL")
    corpus = parse_jsonl_corpus(TINY, source="tiny.jsonl")
    store.collections.ensure(corpus_path=str(tmp_path / "tiny.jsonl"), corpus_fingerprint=corpus.fingerprint)
    store.questions.add("How many vacation days?", query_id="q-ann", author=ANNOTATOR.name)
    store.questions.add("What is the policy?", query_id="q-boss", author=ADMIN.name)
    store.judgments.set("q-boss", "d1", 2, annotator=ADMIN.name)
    yield SimpleNamespace(store=store, corpus=corpus, db=db_url, tmp=tmp_path)
    store.close()


def upload(data: bytes = GOLDEN, name: str = "golden.jsonl") -> io.BytesIO:
    f = io.BytesIO(data)
    f.name = name
    return f


# One call per write function of the app layer; each needs the lowest role named with it.
WRITES = {
    "add_question": ("annotator", lambda w, a: label.add_question(w.store, w.corpus, a, "Is there a gym?", "yes-no")),
    "grade": ("annotator", lambda w, a: label.grade(w.store, a, "q-boss", "d2", 1)),
    "clear_grade": ("annotator", lambda w, a: label.grade(w.store, a, "q-boss", "d1", None)),
    "set_unanswerable": ("annotator", lambda w, a: label.set_unanswerable(w.store, a, "q-ann", True)),
    "next_for_me": ("annotator", lambda w, a: label.next_for_me(w.store, a)),
    "adjudicate": ("admin", lambda w, a: adjudicate.adjudicate(w.store, a, "q-boss", "d1", 1, "why")),
    "edit_own_question": ("annotator", lambda w, a: gs.edit_question(w.store, a, "q-ann", "How many days?", "t", "")),
    "delete_own_question": ("annotator", lambda w, a: gs.delete_question(w.store, a, "q-ann")),
    "edit_others_question": ("admin", lambda w, a: gs.edit_question(w.store, a, "q-boss", "Changed?", "", "")),
    "delete_others_question": ("admin", lambda w, a: gs.delete_question(w.store, a, "q-boss")),
    "import_golden_file": ("admin", lambda w, a: gs.import_golden_file(w.store, a, upload(), w.corpus,
                                                                         str(w.tmp / "tiny.jsonl"))),
    "use_corpus": ("admin", lambda w, a: use_corpus(w.store, a, w.tmp / "other.jsonl", w.corpus)),
    "open_server_path": ("admin", lambda w, a: app_corpus.open_server_path(a, str(SAMPLE_CORPUS))),
    "open_sample": ("admin", lambda w, a: app_corpus.open_sample(a)),
    "upload_corpus": ("admin", lambda w, a: app_corpus.upload_corpus(a, "tiny.jsonl", TINY.encode())),
    "add_user": ("admin", lambda w, a: acc.add_user(w.store, a, "new@example.org", "viewer")),
    "update_user": ("admin", lambda w, a: acc.update_user(w.store, a, "new@example.org", role="annotator")),
    "reinvite": ("admin", lambda w, a: acc.reinvite(w.store, a, "new@example.org")),
    "list_users": ("admin", lambda w, a: acc.users(w.store, a)),
    "set_team_setting": ("admin", lambda w, a: acc.set_team_setting(w.store, a, "session_hours", 8)),
    "save_system": ("admin", lambda w, a: systems.save_system(w.store, a, ENDPOINT)),
    "delete_system": ("admin", lambda w, a: systems.delete_system(w.store, a, "nowhere")),
    "test_query": ("admin", lambda w, a: systems.test_query(a, ENDPOINT, "Is there a gym?")),
}
# An endpoint on the discard port: a test query gets "connection refused" at once.
ENDPOINT = 'name = "nowhere"\nurl = "http://127.0.0.1:9/search?q={query}"\nretries = 0\n[response]\nhits = "hits"\nid = "id"\n'

RANK = {"viewer": 0, "annotator": 1, "admin": 2}


def test_permissions_are_the_documented_matrix():
    assert {role: set(cans) for role, cans in PERMISSIONS.items()} == MATRIX
    for role, cans in MATRIX.items():
        actor = Actor("x", role, team=True)
        for action in Can:
            assert actor.can(action) == (action in cans)


def test_local_actor_is_an_admin_under_the_typed_name():
    actor = local_actor("  Ann   Lee ")
    assert actor == Actor("Ann Lee", Role.ADMIN, team=False) and actor.label == "Ann Lee · local"
    assert local_actor("").label == "(no name yet) · local"
    assert ANNOTATOR.label == "ann@example.org · annotator"


@pytest.mark.parametrize("role", ACTORS)
@pytest.mark.parametrize("write", WRITES)
def test_each_write_works_or_is_refused_per_the_matrix(ws, role, write, monkeypatch):
    monkeypatch.setenv(systems.SYSTEM_HOSTS, "127.0.0.1:9")  # the host ENDPOINT names (a team's endpoints call listed hosts)
    needed, call = WRITES[write]
    actor = ACTORS[role]
    if write in ("update_user", "reinvite"):
        ws.store.accounts.add_user("new@example.org", "viewer", by="(setup)")
    before = snapshot(ws.db)
    if RANK[role] >= RANK[needed]:
        call(ws, actor)
        return
    with pytest.raises(AccessDenied) as info:
        call(ws, actor)
    message = str(info.value)
    article = "an" if role[0] in "aeiou" else "a"
    assert f"{actor.name} is {article} {role} and may not" in message or "written by" in message
    assert "Hint:" in message
    assert snapshot(ws.db) == before  # refused before anything was written


def test_viewer_refusals_name_the_action(ws):
    with pytest.raises(AccessDenied, match="vic@example.org is a viewer and may not grade documents"):
        label.grade(ws.store, VIEWER, "q-ann", "d1", 2)
    with pytest.raises(AccessDenied, match="is a viewer and may not write questions"):
        label.add_question(ws.store, ws.corpus, VIEWER, "Anything?")
    with pytest.raises(AccessDenied, match="is an annotator and may not open or upload a corpus"):
        app_corpus.open_sample(ANNOTATOR)
    with pytest.raises(AccessDenied, match="may not import golden files"):
        load_demo_golden(ws.store, ANNOTATOR, ws.corpus, str(SAMPLE_CORPUS))


def test_admin_loads_the_demo_golden_set(ws):
    from labeler.corpus import load_corpus

    before = ws.store.questions.index()
    summary = load_demo_golden(ws.store, ADMIN, load_corpus(SAMPLE_CORPUS), str(SAMPLE_CORPUS))
    assert (summary.collection, summary.n_questions, summary.n_new) == ("demo", 62, 62)
    assert ws.store.questions.index() == before  # the demo has its own collection


def test_the_judgment_and_the_question_are_recorded_under_the_actor(ws):
    qid = label.add_question(ws.store, ws.corpus, ANNOTATOR, "  Is there a gym?  ", " yes-no ")
    q = ws.store.questions.get(qid)
    assert (q.author, q.question, q.query_type, q.corpus_fingerprint) == (ANNOTATOR.name, "Is there a gym?", "yes-no",
                                                                        ws.corpus.fingerprint)
    label.grade(ws.store, ANNOTATOR, qid, "d3", 2)
    label.grade(ws.store, OTHER, qid, "d3", 0)
    assert {(j.annotator, j.grade) for j in ws.store.judgments.list(query_id=qid)} == {(ANNOTATOR.name, 2), (OTHER.name, 0)}
    label.grade(ws.store, OTHER, qid, "d3", None)  # clears only OTHER's own grade
    assert [(j.annotator, j.grade) for j in ws.store.judgments.list(query_id=qid)] == [(ANNOTATOR.name, 2)]
    with pytest.raises(TypeError):  # there is no way to pass someone else's name
        label.grade(ws.store, ANNOTATOR, qid, "d3", 1, annotator="someone-else")  # type: ignore[call-arg]
    label.set_unanswerable(ws.store, ADMIN, "q-ann", True)
    assert ws.store.questions.get("q-ann").unanswerable


def test_annotator_edits_and_deletes_their_own_question_while_only_they_judged_it(ws):
    label.grade(ws.store, ANNOTATOR, "q-ann", "d1", 2)  # their own grade does not stop them
    gs.edit_question(ws.store, ANNOTATOR, "q-ann", "How many vacation days a year?", " numeric ", "n")
    q = ws.store.questions.get("q-ann")
    assert (q.question, q.query_type, q.notes) == ("How many vacation days a year?", "numeric", "n")
    gs.delete_question(ws.store, ANNOTATOR, "q-ann")
    assert ws.store.questions.get("q-ann") is None


def test_annotator_cannot_change_their_own_question_once_another_annotator_judged_it(ws):
    label.grade(ws.store, OTHER, "q-ann", "d1", 1)
    before = snapshot(ws.db)
    with pytest.raises(AccessDenied, match="q-ann has judgments by bob@example.org"):
        gs.edit_question(ws.store, ANNOTATOR, "q-ann", "Changed?", "", "")
    with pytest.raises(AccessDenied, match="only by an admin"):
        gs.delete_question(ws.store, ANNOTATOR, "q-ann")
    assert snapshot(ws.db) == before
    gs.edit_question(ws.store, ADMIN, "q-ann", "Changed by the admin?", "", "")  # an admin still may
    gs.delete_question(ws.store, ADMIN, "q-ann")
    assert ws.store.questions.get("q-ann") is None


def test_annotator_cannot_change_someone_elses_or_an_imported_question(ws):
    with pytest.raises(AccessDenied, match="q-boss was written by boss@example.org, not by ann@example.org"):
        gs.require_question_owner(ws.store, ANNOTATOR, "q-boss")
    gs.import_golden_file(ws.store, ADMIN, upload(), ws.corpus, str(ws.tmp / "tiny.jsonl"))
    with pytest.raises(AccessDenied, match="g-1 was written by an import"):
        gs.delete_question(ws.store, ANNOTATOR, "g-1")
    with pytest.raises(AccessDenied, match="q-ann was written by ann@example.org, not by bob@example.org"):
        gs.edit_question(ws.store, OTHER, "q-ann", "Mine now?", "", "")


def test_a_viewer_cannot_change_a_question_they_wrote_before_being_demoted(ws):
    ws.store.questions.add("Written as an annotator?", query_id="q-vic", author=VIEWER.name)
    with pytest.raises(AccessDenied, match="is a viewer and may not edit or delete their own questions"):
        gs.delete_question(ws.store, VIEWER, "q-vic")


def test_owner_check_of_a_missing_question(ws):
    with pytest.raises(InputError, match="no question 'nope'"):
        gs.require_question_owner(ws.store, ANNOTATOR, "nope")
    with pytest.raises(AccessDenied):  # a viewer learns nothing, not even that it is missing
        gs.require_question_owner(ws.store, VIEWER, "nope")


class Tripwire:
    """A retriever that fails the test if anything reads it."""

    def __getattr__(self, name):
        raise AssertionError(f"the retriever was used ({name})")


def test_run_evaluation_refuses_a_viewer_before_any_work(ws):
    before = snapshot(ws.db)
    with pytest.raises(AccessDenied, match="vic@example.org is a viewer and may not run evaluations"):
        run_evaluation(ws.store, VIEWER, None, RunConfig())  # type: ignore[arg-type]
    with pytest.raises(AccessDenied):
        run_evaluation(ws.store, VIEWER, Tripwire(), RunConfig())  # type: ignore[arg-type]
    assert snapshot(ws.db) == before


@pytest.mark.parametrize("actor", [ANNOTATOR, ADMIN])
def test_run_evaluation_is_allowed_to_annotators_and_admins_and_records_who(ws, monkeypatch, actor):
    # The retrieval itself is the retriever's business (tested there); this one ranks the judged documents.
    judged = {q.question: list(q.relevance) for q in ws.store.golden.export().queries}
    retriever = SimpleNamespace(corpus=ws.corpus, search_many=lambda questions, params, progress=None: [
        [SimpleNamespace(doc_id=d, score=1.0) for d in judged[q]] for q in questions])
    record = run_evaluation(ws.store, actor, retriever, RunConfig(), name="smoke").record
    assert record.name == "smoke" and ws.store.runs.list()[0].run_id == record.run_id
    assert rows(ws.db, "SELECT created_by FROM runs") == [(actor.name,)]


# --------------------------------------------------------------------------- managing the team


@pytest.fixture
def team(db_url):
    store = open_store(db_url, synchronous="NORMAL")
    store.accounts.add_user("boss@example.org", "admin")
    store.accounts.add_user("ann@example.org", "annotator")
    yield store
    store.close()


def test_managing_the_team_as_admin(team):
    link = acc.add_user(team, ADMIN, "new@example.org", "annotator", name="New")
    assert link.startswith("http://127.0.0.1:8501/?invite=")
    token = link.split("?invite=", 1)[1]
    assert team.accounts.accept_invite(token, "a long new password").user.role == "annotator"
    acc.update_user(team, ADMIN, "new@example.org", role="viewer")
    rows = {r["email"]: r for r in acc.users(team, ADMIN)}
    assert rows["new@example.org"]["role"] == "viewer" and rows["new@example.org"]["sign-in"] == "password"
    assert rows["new@example.org"]["added by"] == ADMIN.name and rows["ann@example.org"]["sign-in"] == "OIDC"
    with pytest.raises(InputError, match="last admin"):
        acc.update_user(team, ADMIN, ADMIN.name, role="viewer")


def test_a_question_asked_again_is_refused_and_named(ws):
    before = [q.query_id for q in ws.store.questions.index()]
    qid = label.add_question(ws.store, ws.corpus, ANNOTATOR, "Is there a gym on site?")
    with pytest.raises(InputError, match=f"already {qid}"):
        label.add_question(ws.store, ws.corpus, ANNOTATOR, "  is there a GYM  on site? ")  # case and spaces aside
    assert [q.query_id for q in ws.store.questions.index()] == [*before, qid]
    assert label.add_question(ws.store, ws.corpus, ANNOTATOR, "Is there a gym on site at night?") != qid
