"""Team mode (LABELER_TEAM=1) in Chromium: sign-in, roles, sessions, and no tracebacks.

The app servers run against a LABELER_HOME holding the sample corpus's embeddings (no embedding
happens). The OpenID Connect test starts its own (with [auth] secrets, a database of its own); the
others share one module server without them (`team_site`: its start and its first load of the model and
the index paid once), each with users of its own and, where it writes damage, a collection of its own,
restoring a team setting it damages:
1. OpenID Connect through the local mock provider: an admin sees the Team page, the corpus
   tabs and loads the demo golden set; an annotator (opened at `/?annotator=someone-else`)
   sees none of the admin parts and grades under their e-mail; an unlisted user is refused.
2. Built-in accounts: a viewer cannot grade, five wrong passwords lock an address, sign-out,
   an invite link sets a password and signs in, and an expired session asks for a new sign-in.
3. A page that raises an unexpected error shows an error id (logged with its traceback), not
   a traceback. The trigger is a damaged database row (a saved run whose JSON is cut off),
   written by the test with sqlite3: no product code exists only for tests. The same kind of
   damage met while signing in (a team setting) gets an error id too.

Screenshots go to test-artifacts/team-*.png.
"""
from __future__ import annotations

import os
import re
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from browser_support import AppServer, browser, sample_embeddings, screenshot, wait_ready, wait_until  # noqa: F401
from oidc_support import oidc_provider, oidc_sign_in, oidc_sign_out, write_auth_secrets
from playwright.sync_api import expect

from labeler_storage import open_store

pytestmark = pytest.mark.browser

STEP_MS = 60_000
FIRST_PAGE_MS = 180_000  # the first Label page loads the model and the index
PASSWORD = "correct horse battery"
OIDC_BUTTON = "Sign in with your organisation's account"


# --------------------------------------------------------------------------- set-up


@pytest.fixture
def home(sample_embeddings) -> Path:
    """$LABELER_HOME (per test, from conftest) with the sample embeddings copied in."""
    path = Path(os.environ["LABELER_HOME"])
    path.mkdir(parents=True, exist_ok=True)
    shutil.copytree(sample_embeddings, path / "cache", dirs_exist_ok=True)
    return path


@pytest.fixture(scope="module")
def team_site(sample_embeddings, tmp_path_factory) -> AppServer:
    """One team-mode server for the module, built-in accounts only (no [auth] secrets), on a SQLite database
    in its own LABELER_HOME (`.home`) holding the demo golden set in the default collection. Tests add
    users of their own, and stop nothing: `run_journey(..., keep_server=True)`."""
    home = tmp_path_factory.mktemp("team-home")
    shutil.copytree(sample_embeddings, home / "cache")
    with open_store(home / "labeler.db") as store:
        load_demo_golden_set(store)
    with pytest.MonkeyPatch.context() as env:  # the server copies os.environ when it is made
        env.setenv("LABELER_TEAM", "1")
        for name in ("LABELER_DB_URL", "LABELER_CORPUS", "STREAMLIT_SECRETS_FILES"):
            env.delenv(name, raising=False)
        server = AppServer(home, script="team_app.py")
    try:
        server.wait_healthy()
        yield server
    finally:
        server.stop()


def team_server(monkeypatch, home: Path, *, secrets: Path | None = None) -> AppServer:
    """A team-mode app server; AppServer copies os.environ when it is made, so set it first."""
    monkeypatch.setenv("LABELER_TEAM", "1")
    if secrets is None:
        monkeypatch.delenv("STREAMLIT_SECRETS_FILES", raising=False)
    else:
        monkeypatch.setenv("STREAMLIT_SECRETS_FILES", str(secrets))
    server = AppServer(home, script="team_app.py")  # what `labeler app --team` runs
    server.wait_healthy()
    return server


def new_page(browser):
    """A page in its own browser context: its own cookies, so its own signed-in user."""
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    page = context.new_page()
    page.set_default_timeout(STEP_MS)
    return page


def visible(locator, timeout: float = STEP_MS) -> None:
    locator.first.wait_for(state="visible", timeout=timeout)


def sidebar_go(page, name: str) -> None:
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=name, exact=True).click()
    wait_ready(page)


def nav_links(page) -> list[str]:
    """The navigation's page titles (a link's text also holds its icon's ligature name, on a line above)."""
    return [t.strip().split("\n")[-1] for t in page.get_by_test_id("stSidebarNav").get_by_role("link").all_inner_texts()]


def expect_signed_in(page, email: str, role: str, timeout: float = FIRST_PAGE_MS) -> None:
    expect(page.get_by_test_id("stSidebar")).to_contain_text(f"Signed in as {email} · {role}", timeout=timeout)


def expect_sign_in_form(page) -> None:
    """The sign-in form, no one shown as signed in, and no page of the app in the navigation."""
    visible(page.locator(".st-key-sign_in_email input"))
    expect(page.get_by_text("Signed in as")).to_have_count(0)
    expect(page.get_by_test_id("stSidebarNav")).to_have_count(0)
    expect(page.get_by_role("button", name="Sign out")).to_have_count(0)


def sign_in_with_password(page, email: str, password: str = PASSWORD) -> None:
    page.locator(".st-key-sign_in_email input").fill(email)
    page.locator(".st-key-sign_in_password input").fill(password)
    page.get_by_role("button", name="Sign in", exact=True).click()


def card(page, key: str):
    return page.locator(f".st-key-{key}")


def card_doc_id(page, key: str) -> str:
    return card(page, key).locator("small code").first.inner_text()


def sql(home: Path, query: str, *args) -> list[tuple]:
    con = sqlite3.connect(home / "labeler.db")
    try:
        with con:
            return con.execute(query, args).fetchall()
    finally:
        con.close()


def load_demo_golden_set(store) -> None:
    """The demo golden set in the default collection (an upload of sample_corpus/golden.jsonl), before the server starts."""
    from conftest import import_demo

    import_demo(store)


def run_journey(name: str, server: AppServer, pages: list, body: Callable[[], None], provider=None, *,
                keep_server: bool = False) -> None:
    """Run `body`; on failure keep a screenshot of every page and print the server's log. Then close the
    pages and stop the server (unless `keep_server`: a module's server)."""
    try:
        body()
    except BaseException:
        for i, page in enumerate(pages):
            try:
                screenshot(page, f"FAILED-{name}-{i}", full_page=False)
            except Exception:  # noqa: BLE001 - a screenshot must not hide the real failure
                pass
        print(server.log(), provider.log() if provider else "", sep="\n---- provider\n")
        raise
    finally:
        for page in pages:
            page.context.close()
        if not keep_server:
            server.stop()


# --------------------------------------------------------------------------- 1. OpenID Connect


def test_team_oidc_roles_and_annotator_identity(home, browser, monkeypatch, tmp_path):
    store = open_store(home / "labeler.db")
    store.accounts.add_user("admin@example.org", "admin")
    store.accounts.add_user("ann@example.org", "annotator")
    with oidc_provider(log=tmp_path / "provider.log") as provider:
        secrets = write_auth_secrets(tmp_path / "secrets" / "secrets.toml", provider)
        server = team_server(monkeypatch, home, secrets=secrets)
        admin, ann = new_page(browser), new_page(browser)

        def journey() -> None:
            # The sign-in screen offers the organisation's account and the built-in form.
            admin.goto(server.url)
            wait_ready(admin)
            expect_sign_in_form(admin)
            visible(admin.get_by_role("button", name=OIDC_BUTTON))
            screenshot(admin, "team-sign-in-oidc", full_page=False)

            # Admin: the Team page, the corpus tabs, the demo golden set, the golden upload.
            admin.get_by_role("button", name=OIDC_BUTTON).click()
            oidc_sign_in(admin, email="admin@example.org", name="Ada Admin")
            expect_signed_in(admin, "admin@example.org", "admin")
            assert "Team" in nav_links(admin)
            visible(admin.locator(".st-key-load-demo button"), FIRST_PAGE_MS)
            admin.locator(".st-key-load-demo button").click()
            visible(admin.get_by_text(re.compile("Opened the demo golden set in its own collection")))
            wait_ready(admin)
            sidebar_go(admin, "Corpus")
            for tab in ("Sample corpus", "Path on the server", "Upload"):
                visible(admin.get_by_role("tab", name=tab))
            sidebar_go(admin, "Golden set")
            visible(admin.get_by_role("heading", name="Upload a golden JSONL"))
            sidebar_go(admin, "Team")
            visible(admin.get_by_role("heading", name="Team settings"))
            screenshot(admin, "team-admin-team-page")

            # Annotator, at a URL naming someone else: the name is ignored, the e-mail is used.
            ann.goto(server.url + "/?annotator=someone-else")
            wait_ready(ann)
            ann.get_by_role("button", name=OIDC_BUTTON).click()
            oidc_sign_in(ann, email="ann@example.org", name="Ann Otator")
            # The OIDC round trip lands on the root; the demo the admin opened is its own collection.
            ann.goto(server.url + "/?annotator=someone-else&set=demo")
            expect_signed_in(ann, "ann@example.org", "annotator")
            assert "Team" not in nav_links(ann)
            expect(ann.get_by_role("textbox", name="Annotator")).to_have_count(0)
            visible(card(ann, "cand-0"), FIRST_PAGE_MS)
            doc_id = card_doc_id(ann, "cand-0")
            # Ann starts at her first unfinished question, q-0001.
            card(ann, "cand-0").get_by_role("radio", name="0 · Not relevant").click()
            visible(card(ann, "cand-0").locator("button[role=radio][aria-checked=true]"))
            wait_ready(ann)
            ann.get_by_role("heading", level=1).first.scroll_into_view_if_needed()
            screenshot(ann, "team-annotator-label", full_page=False)
            demo = store.judgments.list(collection="demo")
            mine = [(j.query_id, j.doc_id, j.grade) for j in demo if j.annotator == "ann@example.org"]
            assert mine == [("q-0001", doc_id, 0)]
            assert not [j for j in demo if j.annotator == "someone-else"]

            sidebar_go(ann, "Corpus")
            visible(ann.get_by_text("Only an admin can open another corpus"))
            expect(ann.get_by_role("tab", name="Upload")).to_have_count(0)
            sidebar_go(ann, "Golden set")
            visible(ann.get_by_role("heading", name="Download"))
            expect(ann.get_by_role("heading", name="Upload a golden JSONL")).to_have_count(0)

            # Sign out: through the provider's end-session page, back to the sign-in screen.
            ann.get_by_role("button", name="Sign out").click()
            oidc_sign_out(ann)
            expect_sign_in_form(ann)

            # Someone the provider knows but the team does not: refused, with a way out.
            ann.get_by_role("button", name=OIDC_BUTTON).click()
            oidc_sign_in(ann, email="eve@example.org", name="Eve")
            visible(ann.get_by_text(re.compile("eve@\u2060?example\\.org is not on this team")))  # inert: a word joiner after @
            visible(ann.get_by_text("ask an admin to add you"))
            expect(ann.get_by_test_id("stSidebarNav")).to_have_count(0)
            screenshot(ann, "team-oidc-refused", full_page=False)
            assert store.accounts.get_user("eve@example.org") is None
            ann.get_by_role("button", name="Use another account").click()
            oidc_sign_out(ann)
            expect_sign_in_form(ann)

            # Someone else claiming the admin's address: refused unverified, and refused verified too,
            # since the admin's account is bound to the subject she signed in with first.
            for verified, said in ((False, "has not verified the address admin@\u2060?example\\.org"),
                                   (True, "admin@\u2060?example\\.org already signs in with another account")):
                ann.get_by_role("button", name=OIDC_BUTTON).click()
                oidc_sign_in(ann, email="admin@example.org", sub="mallory", extra_claims={"email_verified": verified})
                visible(ann.get_by_text(re.compile(said)))  # inert: a word joiner after @
                expect(ann.get_by_test_id("stSidebarNav")).to_have_count(0)
                ann.get_by_role("button", name="Use another account").click()
                oidc_sign_out(ann)
                expect_sign_in_form(ann)

        run_journey("team-oidc", server, [admin, ann], journey, provider)


# --------------------------------------------------------------------------- 2. built-in accounts


def test_team_builtin_accounts_viewer_lockout_invite_and_expiry(team_site, browser):
    server, home = team_site, team_site.home
    store = open_store(home / "labeler.db")
    for email, role in (("viewer@example.org", "viewer"), ("ann@example.org", "annotator"),
                        ("locked@example.org", "annotator")):
        store.accounts.add_user(email, role, password=PASSWORD)
    store.accounts.add_user("new@example.org", "annotator")
    n_judgments = len(store.judgments.list())
    page, invited = new_page(browser), new_page(browser)

    def journey() -> None:
        for path in ("/corpus", "/golden_set", "/team"):  # a page's own URL leads to the sign-in form, nothing else
            page.goto(server.url + path)
            wait_ready(page)
            expect_sign_in_form(page)
            expect(page.get_by_text("Documents", exact=True)).to_have_count(0)
            expect(page.get_by_text("Page not found")).to_have_count(0)
        page.goto(server.url)
        wait_ready(page)
        expect_sign_in_form(page)
        expect(page.get_by_role("button", name=OIDC_BUTTON)).to_have_count(0)  # no [auth] secrets
        screenshot(page, "team-sign-in", full_page=False)

        # A viewer reads, is told they cannot grade, and a grade click changes nothing.
        sign_in_with_password(page, "viewer@example.org")
        expect_signed_in(page, "viewer@example.org", "viewer")
        visible(page.get_by_test_id("stAlertContentInfo").filter(has_text="You are a viewer"), FIRST_PAGE_MS)
        visible(card(page, "cand-0"), FIRST_PAGE_MS)
        expect(card(page, "cand-0").get_by_role("radio", name="0 · Not relevant")).to_be_disabled()
        expect(page.get_by_role("button", name="Add question")).to_have_count(0)
        page.keyboard.press("0")  # the keyboard shortcut is disabled too
        assert len(store.judgments.list()) == n_judgments
        assert not [j for j in store.judgments.list() if j.annotator == "viewer@example.org"]
        page.get_by_role("heading", level=1).first.scroll_into_view_if_needed()
        screenshot(page, "team-viewer-label", full_page=False)

        page.get_by_role("button", name="Sign out").click()
        expect_sign_in_form(page)

        # Five wrong passwords make the address wait (1 s, longer with each further failure; made longer
        # here so that a slow run cannot outlast it): then even the right one is refused until then.
        for failures in range(1, 6):
            sign_in_with_password(page, "locked@example.org", "not the password")
            wait_until(lambda f=failures: sql(home, "SELECT failures FROM login_failures WHERE email = ?",
                                              "locked@example.org") == [(f,)], f"{failures} failures recorded")
            visible(page.get_by_test_id("stAlertContentError").filter(has_text="wrong e-mail address or password"))
        sql(home, "UPDATE login_failures SET locked_until = '2999-01-01T00:00:00Z' WHERE email = ?", "locked@example.org")
        sign_in_with_password(page, "locked@example.org")
        visible(page.get_by_test_id("stAlertContentError").filter(has_text="too many failed sign-ins"))
        expect_sign_in_form(page)
        screenshot(page, "team-locked", full_page=False)

        # An invite link: set a password (typed twice), signed in at once; the link then stops working.
        link = f"{server.url}/?invite={store.accounts.invite('new@example.org')}"
        invited.goto(link)
        wait_ready(invited)
        visible(invited.get_by_role("heading", name="Set your password"))
        invited.locator(".st-key-invite_password input").fill("a fine new passphrase")
        invited.locator(".st-key-invite_repeat input").fill("a fine new passphrase!")
        invited.get_by_role("button", name="Set password and sign in").click()
        visible(invited.get_by_text("the two passwords differ"))
        screenshot(invited, "team-invite", full_page=False)
        invited.locator(".st-key-invite_repeat input").fill("a fine new passphrase")
        invited.get_by_role("button", name="Set password and sign in").click()
        expect_signed_in(invited, "new@example.org", "annotator")
        assert "invite=" not in invited.url
        invited.goto(link)  # used up: said at once, and no form to fill
        wait_ready(invited)
        visible(invited.get_by_text("this invite link is not valid"))
        expect(invited.locator(".st-key-invite_password input")).to_have_count(0)

        # An expired session: the next click is refused, saves nothing, and asks for a new sign-in.
        sign_in_with_password(page, "ann@example.org")
        expect_signed_in(page, "ann@example.org", "annotator")
        visible(card(page, "cand-0"))
        wait_ready(page)
        # It runs out now (in the database: a session a second or two long could end during a slow sign-in).
        sql(home, "UPDATE sessions SET expires_at = '2000-01-01T00:00:00Z' WHERE user_id IN "
                  "(SELECT id FROM users WHERE email = 'ann@example.org')")
        card(page, "cand-0").get_by_role("radio", name="0 · Not relevant").click()
        visible(page.get_by_test_id("stAlertContentWarning").filter(has_text="Your session has ended"))
        expect_sign_in_form(page)
        screenshot(page, "team-session-ended", full_page=False)
        assert not [j for j in store.judgments.list() if j.annotator == "ann@example.org"]
        sign_in_with_password(page, "ann@example.org")
        expect_signed_in(page, "ann@example.org", "annotator")
        visible(card(page, "cand-0"))
        wait_ready(page)
        screenshot(page, "team-after-expiry-sign-in", full_page=False)

        # A link to a page, opened signed out: the sign-in form, then that page.
        page.get_by_role("button", name="Sign out").click()
        expect_sign_in_form(page)
        page.goto(server.url + "/golden_set")
        wait_ready(page)
        expect_sign_in_form(page)
        sign_in_with_password(page, "ann@example.org")
        visible(page.get_by_role("heading", name="Golden set", exact=True), FIRST_PAGE_MS)
        assert page.url.endswith("/golden_set")
        expect(page.get_by_text("Page not found")).to_have_count(0)

    try:
        run_journey("team-builtin", server, [page, invited], journey, keep_server=True)
    finally:
        store.close()


# --------------------------------------------------------------------------- 3. no tracebacks


def admin_only(home: Path):
    """The store of `home`'s database, whose admin@example.org is an admin with a password."""
    store = open_store(home / "labeler.db")
    if store.accounts.get_user("admin@example.org") is None:  # the module's server: another test may have added her
        store.accounts.add_user("admin@example.org", "admin", password=PASSWORD)
    return store


def open_and_sign_in_as_admin(page, server: AppServer, path: str = "/") -> None:
    page.goto(server.url + path)
    wait_ready(page)
    sign_in_with_password(page, "admin@example.org")


def test_team_unexpected_page_error_shows_an_id_not_a_traceback(team_site, browser):
    server, home = team_site, team_site.home
    store = admin_only(home)
    store.collections.ensure("damaged")  # the damage stays in a collection of its own
    page = new_page(browser)

    def journey() -> None:
        open_and_sign_in_as_admin(page, server, "/?set=damaged")
        expect_signed_in(page, "admin@example.org", "admin")
        wait_ready(page, timeout=FIRST_PAGE_MS)
        # A saved run whose summary JSON is cut off (a damaged row): reading it raises ValueError.
        collection_id = sql(home, "SELECT id FROM collections WHERE name = 'damaged'")[0][0]
        sql(home, "INSERT INTO runs (collection_id, config, config_hash, golden_hash, corpus_fingerprint, summary,"
                  " per_query, created_at, name, created_by) VALUES (?, '{}', 'c', 'g', '', '{\"ndcg@10\": 0.', '{}',"
                  " '2026-01-01T00:00:00Z', 'damaged', 'test')", collection_id)
        sidebar_go(page, "Compare runs")
        message = page.get_by_test_id("stAlertContentError").filter(has_text="Something went wrong on our side")
        visible(message)
        incident = re.search(r"error id (\w+)", message.inner_text()).group(1)
        expect(page.get_by_test_id("stException")).to_have_count(0)
        assert "Traceback" not in page.get_by_test_id("stMain").inner_text()
        screenshot(page, "team-error-id", full_page=False)
        log = (home / "logs" / "errors.log").read_text()
        assert f"--- {incident} " in log and "JSONDecodeError" in log and "admin@example.org" in log
        sidebar_go(page, "Golden set")  # the app goes on working
        visible(page.get_by_role("heading", name="Download"))

    try:
        run_journey("team-error", server, [page], journey, keep_server=True)
    finally:
        store.close()


def test_team_unexpected_sign_in_error_shows_an_id_not_a_traceback(team_site, browser):
    server, home = team_site, team_site.home
    store = admin_only(home)
    store.accounts.set_setting("session_hours", 12)
    sql(home, "UPDATE team_settings SET value = '{\"hours\": 1' WHERE key = 'session_hours'")  # a damaged row
    page = new_page(browser)

    def journey() -> None:
        open_and_sign_in_as_admin(page, server)
        wait_ready(page)
        page.wait_for_timeout(1000)
        wait_ready(page)
        screenshot(page, "team-sign-in-error", full_page=False)
        expect(page.get_by_test_id("stException")).to_have_count(0)
        visible(page.get_by_text("Something went wrong on our side"), 5000)

    try:
        run_journey("team-sign-in-error", server, [page], journey, keep_server=True)
    finally:  # the module's server signs everyone in with this setting: repaired whatever happened
        store.accounts.set_setting("session_hours", 12)
        store.close()
