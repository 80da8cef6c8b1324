"""A password sign-in survives a reload, in Chromium on the team server (team_app.py), on SQLite and
PostgreSQL: the page has the browser POST a one-time code to the server's /_labeler/session route,
whose answer sets an HttpOnly, SameSite=Strict cookie (not Secure: the test serves plain http on
127.0.0.1) holding a token of the session row, while the tab goes on with its own. Reloaded (or in a
new tab), still signed in; the cookie in another browser (another User-Agent) signs no one in; a
server restart under the open tab keeps her signed in (the new process has no session state: the
reconnecting tab brings the cookie); an expired session, and a sign-out (which clears the cookie),
show the sign-in form on reload. Screenshots go to test-artifacts/cookie-*.png."""
from __future__ import annotations

import pytest
from browser_support import AppServer, sample_embeddings, screenshot, wait_ready, wait_until  # noqa: F401 - a fixture
from conftest import new_db_url, rows
from playwright.sync_api import expect
from test_browser_team import (PASSWORD, browser, expect_sign_in_form, expect_signed_in, home,  # noqa: F401 - fixtures
                               run_journey, sidebar_go, sign_in_with_password, team_server)

from labeler.passwords import token_digest
from labeler_storage import open_store

pytestmark = pytest.mark.browser
COOKIE = "labeler_session"
WHO = "ann@example.org"


def _cookie(context) -> dict | None:
    return next((c for c in context.cookies() if c["name"] == COOKIE), None)


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_a_password_sign_in_survives_a_reload_until_sign_out_or_expiry(request, engine, home, browser, monkeypatch):
    url = new_db_url(request, engine, home / "labeler.db")
    if engine == "postgresql":
        monkeypatch.setenv("LABELER_DB_URL", url)
    with open_store(url) as store:
        store.accounts.add_user(WHO, "annotator", password=PASSWORD)
    server = team_server(monkeypatch, home)
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    stranger = browser.new_context(user_agent="Mozilla/5.0 (a stranger's browser)").new_page()

    def journey() -> None:
        page.goto(server.url + "/corpus")  # a light page: no model to load
        wait_ready(page)
        sign_in_with_password(page, WHO)
        expect_signed_in(page, WHO, "annotator")
        wait_until(lambda: _cookie(context) is not None, "the session cookie")
        expect(page).to_have_url(server.url + "/corpus")  # the page did not move
        wait_ready(page)
        expect_signed_in(page, WHO, "annotator")
        cookie = _cookie(context)
        flags = (cookie["httpOnly"], cookie["sameSite"], cookie["path"], cookie["secure"])
        assert flags == (True, "Strict", "/", False)  # not Secure: plain http on 127.0.0.1
        assert COOKIE not in page.evaluate("document.cookie")  # no script of the page can read it
        assert rows(url, "SELECT cookie_hash FROM sessions") == [(token_digest(cookie["value"]),)]  # of her session row
        sidebar_go(page, "Golden set")  # the tab that signed in goes on with its own token
        expect(page.get_by_role("heading", name="Golden set")).to_be_visible()
        expect_signed_in(page, WHO, "annotator")

        page.reload()
        expect_signed_in(page, WHO, "annotator")
        wait_ready(page)
        screenshot(page, "cookie-reloaded", full_page=False)
        tab = context.new_page()  # a new tab of the same browser
        tab.goto(server.url + "/corpus")
        expect_signed_in(tab, WHO, "annotator")
        tab.close()

        # The cookie copied into another browser (another User-Agent) is not her session.
        stranger.context.add_cookies([{k: cookie[k] for k in ("name", "value", "domain", "path")}])
        stranger.goto(server.url + "/corpus")
        expect_sign_in_form(stranger)

        # The server restarts on its port: the tab reconnects to a process that never saw her sign in.
        server.stop()
        servers.append(AppServer(home, port=server.port, script="team_app.py"))
        servers[-1].wait_healthy()
        wait_ready(page)
        sidebar_go(page, "Corpus")  # a run on the new server, which has only the cookie to go by
        expect(page.get_by_role("heading", name="Documents")).to_be_visible()
        expect_signed_in(page, WHO, "annotator")

        # Sign-out ends the session row and clears the cookie; a reload shows the form.
        page.get_by_role("button", name="Sign out").click()
        expect_sign_in_form(page)
        wait_until(lambda: _cookie(context) is None, "the cookie cleared")
        assert rows(url, "SELECT count(*) FROM sessions") == [(0,)]
        page.reload()
        expect_sign_in_form(page)

        # Signed in again, then the session expires: a reload asks for a sign-in.
        sign_in_with_password(page, WHO)
        expect_signed_in(page, WHO, "annotator")
        wait_until(lambda: _cookie(context) is not None, "the new session cookie")
        rows(url, "UPDATE sessions SET expires_at = '2000-01-01T00:00:00Z'")
        page.reload()
        expect_sign_in_form(page)
        screenshot(page, "cookie-expired", full_page=False)

    servers = [server]
    try:
        run_journey(f"cookie-{engine}", server, [page, stranger], journey)  # closes the pages, stops the server
    finally:
        servers[-1].stop()
