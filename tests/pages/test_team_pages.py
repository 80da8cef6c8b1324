"""AppTest: team mode as a signed-in user sees it — sign-in gate on every page, roles in the UI
and in the actions behind it, the URL's annotator ignored, expired sessions, no tracebacks."""
from __future__ import annotations


import pytest
from browser_support import app_home, grade_control, sample_embeddings, submit_question, texts  # noqa: F401 - fixtures
from streamlit.testing.v1 import AppTest

from conftest import REPO, rows
from conftest import import_demo
from labeler_storage.store import open_store

PASSWORD = "a long enough password"
PAGES = ["../pages/label.py", "../pages/corpus.py", "../pages/golden_set.py", "../pages/evaluate.py", "../pages/compare.py"]


@pytest.fixture
def team(app_home, monkeypatch):
    monkeypatch.setenv("LABELER_TEAM", "1")
    store = open_store()
    for email, role in (("boss@example.org", "admin"), ("ann@example.org", "annotator"),
                        ("vic@example.org", "viewer")):
        store.accounts.add_user(email, role, password=PASSWORD)
    return store


def start(query: dict | None = None) -> AppTest:
    at = AppTest.from_file(str(REPO / "edge" / "streamlit_app.py"), default_timeout=120)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def sign_in(at: AppTest, email: str, password: str = PASSWORD) -> AppTest:
    at.text_input(key="sign_in_email").input(email)
    at.text_input(key="sign_in_password").input(password)
    at.button(key="FormSubmitter:sign-in-Sign in").click().run()
    assert not at.exception, at.exception
    return at


def signed_in_as(at: AppTest) -> str:
    return next((c for c in texts(at.caption) if c.startswith("Signed in as")), "")


@pytest.mark.parametrize("page", PAGES)
def test_no_page_exists_before_sign_in(team, page):
    at = start()
    assert texts(at.title) == ["Golden Set Labeler"] and at.text_input(key="sign_in_password")
    assert not at.dataframe and not at.metric  # nothing of the golden set or the corpus is shown
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        at.switch_page(page)  # the navigation holds only empty placeholders at the pages' URLs (see the browser test)


def test_sign_in_shows_who_and_role_and_sign_out_ends_it(team):
    at = sign_in(start(), "ANN@example.org ")
    assert signed_in_as(at) == "Signed in as `ann@example.org` · annotator"
    at.button(key="sign-out").click().run()
    assert at.text_input(key="sign_in_password") and not signed_in_as(at)


def test_wrong_password_is_refused_then_throttled(team):
    at = start()
    for _ in range(5):
        sign_in(at, "ann@example.org", "not the password")
        assert texts(at.error) == ["wrong e-mail address or password"]
    # The fifth failure made the address wait 1 s; a slow run may outlast that, so make it longer.
    rows(team, "UPDATE login_failures SET locked_until = '2999-01-01T00:00:00Z'")
    sign_in(at, "ann@example.org")  # the right one, but the address waits
    assert texts(at.error)[0].startswith("too many failed sign-ins for this address")
    assert not signed_in_as(at)
    assert team.accounts.unlock("ann@example.org")  # what `labeler users unlock` does
    assert signed_in_as(sign_in(at, "ann@example.org"))


def test_an_expired_session_asks_to_sign_in_again_and_saves_nothing(team):
    at = sign_in(start(), "ann@example.org")
    assert signed_in_as(at)
    # The session runs out (set in the database: a one-second session could end during a slow sign-in).
    rows(team, "UPDATE sessions SET expires_at = '2000-01-01T00:00:00Z'")
    at.run()
    assert any("session has ended" in w for w in texts(at.warning))
    assert at.text_input(key="sign_in_password") and not signed_in_as(at)


def test_annotator_sees_no_admin_controls_and_grades_as_themselves(team):
    at = sign_in(start({"annotator": "someone-else"}), "ann@example.org")
    submit_question(at, "How many vacation days do new employees get?")
    assert not at.exception, at.exception
    grade_control(at, "cand-0").set_value(2).run()
    assert not at.exception, at.exception
    [judgment] = team.judgments.list()
    assert judgment.annotator == "ann@example.org" and team.questions.get(judgment.query_id).author == "ann@example.org"
    at.switch_page("../pages/corpus.py").run()
    assert not {"open-path", "open-sample", "open-upload"} & {b.key for b in at.button}
    assert any("Only an admin can open another corpus" in c for c in texts(at.caption))
    at.switch_page("../pages/golden_set.py").run()
    assert not at.exception and "import-golden" not in {b.key for b in at.button} and not at.get("file_uploader")
    with pytest.raises(Exception):  # the Team page is not in an annotator's navigation
        at.switch_page("../pages/team.py").run()


def test_viewer_reads_but_cannot_grade(team):
    import_demo(team)  # as an admin's upload of the demo file into the default collection
    before = len(team.judgments.list())
    at = sign_in(start(), "vic@example.org")
    assert any("viewer" in m and "not add questions or grade" in m for m in texts(at.info))
    grades = [b for b in at.button if b.key and b.key.startswith(("cand-", "key-grade-"))]
    assert grades and all(b.disabled for b in grades)  # shown, not usable; the app layer refuses anyway
    assert not [t for t in at.text_input if (t.key or "").startswith("new_question")]
    assert len(team.judgments.list()) == before


def test_admin_manages_the_team_and_a_new_role_applies_at_the_next_click(team):
    at = sign_in(start(), "boss@example.org")
    at.switch_page("../pages/team.py").run()
    assert not at.exception, at.exception
    assert set(at.dataframe[0].value["email"]) == {"boss@example.org", "ann@example.org", "vic@example.org"}
    annotator = sign_in(start(), "ann@example.org")
    team.accounts.update_user("ann@example.org", role="viewer", by="boss@example.org")  # also ends their sessions
    annotator.run()
    assert annotator.text_input(key="sign_in_password") and not signed_in_as(annotator)


def test_an_unexpected_error_shows_an_id_not_a_traceback(team, monkeypatch):
    import labeler_app.label

    def broken(*args, **kwargs):
        raise RuntimeError("secret internals /etc/shadow")

    monkeypatch.setattr(labeler_app.label, "label_progress", broken)
    at = sign_in(start(), "boss@example.org")
    at.button(key="load-demo").click().run()
    assert not at.exception  # the page caught it
    [error] = texts(at.error)
    assert "error id" in error and "secret" not in error and "RuntimeError" not in error
    incident = error.split("**")[1]
    log = (team_home() / "logs" / "errors.log").read_text(encoding="utf-8")
    assert incident in log and "RuntimeError: secret internals" in log


def team_home():
    import os
    from pathlib import Path

    return Path(os.environ["LABELER_HOME"])


def test_a_database_error_shows_an_id_not_where_the_database_is(team):
    from labeler.bugs import error_log

    at = start()
    rows(team, "DROP TABLE login_failures")  # damage the sign-in's first read: a StorageError with the URL
    sign_in(at, "ann@example.org")
    [shown] = texts(at.error)
    assert shown.startswith("The database did not answer as expected (error id ")
    assert "labeler.db" not in shown and "sqlite" not in shown and "login_failures" not in shown
    incident = shown.split("error id ")[1].split(")")[0]
    logged = error_log().read_text()
    assert f"--- {incident} " in logged and "labeler.db" in logged  # the admin finds where, under the id


def test_a_session_driven_from_another_client_is_signed_out(team):
    # Streamlit reattaches a websocket to a session by its id: the session then runs for another
    # client. Here the record of who signed in is changed instead, the same difference seen from the page.
    at = sign_in(start(), "ann@example.org")
    assert signed_in_as(at) and rows(team, "SELECT count(*) FROM sessions") == [(1,)]
    at.session_state["_signed_in_from"] = "203.0.113.7 Mozilla/5.0 (someone else)"
    at.run()
    assert not signed_in_as(at) and at.text_input(key="sign_in_password")
    assert rows(team, "SELECT count(*) FROM sessions") == [(0,)]  # ended for the first client too
