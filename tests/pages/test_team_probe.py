"""A security probe of team mode, kept as regression tests: attacks a browser user can try.

Each attack is a plain test of the refusal. Three succeeded when the probe ran and were fixed:
uploads by a signed-out visitor (now refused by the team server, team_app.py), a
password set through an invite leaving other sessions alive, and server paths on the Corpus
page shown to non-admins.
Most go through the app layer or AppTest (fast); one needs a real server and Chromium.
"""
from __future__ import annotations

import os
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest

from conftest import import_demo
from browser_support import AppServer, app_home, grade_control, launch_chromium, sample_embeddings, texts, wait_ready  # noqa: F401
from streamlit.testing.v1 import AppTest

from labeler_app.corpus_files import NOT_FOUND, open_server_corpus
from conftest import REPO
from labeler.errors import CorpusError, SignInError
from labeler_storage import open_store

from test_team_pages import PASSWORD, team  # noqa: E402,F401 - the same three users, as a fixture


# --------------------------------------------------------------------------- sign-in and sessions


@pytest.fixture
def accounts(db_url):
    """A fresh store's accounts (on each engine) with one annotator, on a clock the test moves."""
    store = open_store(db_url)
    store.accounts.add_user("kim@example.org", "annotator", password=PASSWORD)
    now = [datetime.now(timezone.utc)]
    store.accounts.clock = lambda: now[0]
    return store.accounts, now


def test_throttle_counts_case_whitespace_and_unicode_variants_of_an_address_as_one(accounts):
    acc, _ = accounts
    # "\u212a" (KELVIN SIGN) lower-cases to "k": the same address, so the same counter.
    for variant in ("KIM@example.org", " kim@example.org ", "Kim@Example.Org", "\u212aim@example.org",
                    "kim@EXAMPLE.org"):
        with pytest.raises(SignInError, match="wrong e-mail address or password"):
            acc.sign_in(variant, "not the password")
    with pytest.raises(SignInError, match="too many failed sign-ins"):
        acc.sign_in("kim@example.org", PASSWORD)  # locked: the right password is not even checked


def test_a_password_set_through_an_invite_ends_the_users_other_sessions(accounts):
    acc, _ = accounts
    stolen = acc.sign_in("kim@example.org", PASSWORD)  # e.g. a session on a shared machine
    token = acc.invite("kim@example.org", by="boss@example.org")
    acc.accept_invite(token, "a brand new password")
    assert acc.session_user(stolen.token) is None


# --------------------------------------------------------------------------- the corpus path box


@pytest.fixture
def root(tmp_path) -> Path:
    folder = tmp_path / "corpora"
    folder.mkdir()
    (folder / "etc").symlink_to("/etc")
    return folder


@pytest.mark.parametrize("typed", [
    "/etc/passwd", "../../etc/passwd", "etc/passwd", "etc", "/proc/self/environ", "~/.bashrc", "~root",
    "file:///etc/passwd", "%2e%2e/etc/passwd", "\\..\\..\\etc\\passwd", "docs\x00.jsonl", "\x00",
    "a" * 5000, "x/" * 3000 + "y", "日本語/コーパス.jsonl", "\udcff.jsonl", " \t ",
])
def test_odd_or_hostile_paths_get_the_one_not_found_message_and_no_crash(root, typed):
    with pytest.raises(CorpusError) as caught:
        open_server_corpus(typed, roots=[root])
    assert caught.value.message == NOT_FOUND


# --------------------------------------------------------------------------- the app, as a browser user sees it


def signed_in(email: str) -> AppTest:
    at = AppTest.from_file(str(REPO / "edge" / "streamlit_app.py"), default_timeout=120)
    at.run()
    at.text_input(key="sign_in_email").input(email)
    at.text_input(key="sign_in_password").input(PASSWORD)
    at.button(key="FormSubmitter:sign-in-Sign in").click().run()
    assert not at.exception, at.exception
    return at


def test_a_stale_grade_click_after_a_demotion_saves_nothing(team):
    import_demo(team)  # as an admin's upload of the demo file into the default collection
    ann = signed_in("ann@example.org")
    stale = grade_control(ann, "cand-0")
    before = team.judgments.list()
    team.accounts.update_user("ann@example.org", role="viewer", by="boss@example.org")  # her page is still open
    stale.set_value(1 if stale.value != 1 else 2).run()  # the callback registered while she was an annotator
    assert not ann.exception, ann.exception
    assert team.judgments.list() == before
    assert ann.text_input(key="sign_in_password")  # her session ended with the role change


def test_a_viewer_sees_no_server_path_on_the_corpus_page(team, app_home):
    at = signed_in("vic@example.org")
    at.switch_page("../pages/corpus.py").run()
    assert not at.exception, at.exception
    shown = "\n".join(texts(at.caption) + texts(at.markdown) + texts(at.info) + texts(at.warning))
    for server_path in (str(app_home), str(REPO)):
        assert server_path not in shown


# --------------------------------------------------------------------------- Streamlit's own endpoints


@pytest.mark.browser
def test_a_signed_out_visitor_cannot_store_uploads_on_the_server(playwright, tmp_path, monkeypatch):
    monkeypatch.setenv("LABELER_TEAM", "1")
    # The team server, as `labeler app --team` runs it; the sign-in screen needs no corpus, so no embedding.
    server = AppServer(tmp_path / "home", script="team_app.py")
    browser = launch_chromium(playwright)
    try:
        server.wait_healthy()
        context = browser.new_context()
        page = context.new_page()
        frames: list[bytes] = []
        page.on("websocket", lambda ws: ws.on("framereceived", lambda f: frames.append(
            f if isinstance(f, bytes) else f.encode())))
        page.goto(server.url)
        wait_ready(page)
        assert page.get_by_role("button", name="Sign in").is_visible()
        xsrf = next(c["value"] for c in context.cookies() if c["name"] == "_streamlit_xsrf")
        uuid = rb"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}"
        candidates = dict.fromkeys(m.decode() for f in frames for m in re.findall(uuid, f))
        statuses = []
        for session_id in candidates:  # the NewSession message carries the session id among other ids
            reply = page.request.put(f"{server.url}/_stcore/upload_file/{session_id}/probe",
                                     headers={"X-Xsrftoken": xsrf},
                                     multipart={"file": {"name": "x.bin", "mimeType": "application/octet-stream",
                                                         "buffer": os.urandom(16 << 10)}})
            statuses.append(reply.status)
        # Streamlit's own route accepts such a PUT (it knows nothing of sign-in; 5 x 100 MB took the server
        # from 689 to 1190 MB RSS in the probe); the team server refuses it before reading the body. The body
        # here is small enough to be sent whole before that answer comes: a 1 MB one was still being sent when
        # the server answered and closed, and the client then saw the request aborted, not its 403.
        assert statuses and set(statuses) == {403}, statuses
        assert page.request.get(f"{server.url}/_stcore/metrics").status == 404
    finally:
        browser.close()
        server.stop()
