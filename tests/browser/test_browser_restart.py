"""A server restart under open Label tabs (a deploy, a crash, a replica failover), in Chromium: every
grade clicked is in the database, or the page named it as not saved, and no card shows a grade as
selected that the database does not hold.

One case per (local on SQLite, team on PostgreSQL) x (SIGTERM, SIGKILL), the server restarted on the
same port and data directory. A deployment's cases share its data directory and database (each works in
a collection of its own) and its server: the one a case restarted serves the next case (see Deployment). Two tabs are open on the question:
- one grades, clicks once more and the server dies at once (that click may die with it), then clicks
  again as soon as it shows CONNECTED, before its page could rerun: each is saved or named;
- one idle since it loaded: on reconnecting it runs its page anew without a click (it shows a grade
  written while the server was down), so its four clicks after that must all be saved.
Then the first tab grades three more, all saved, and the idle one grades by key. In team mode a tab that shows the sign-in form after
the restart signs in again (its sign-in cookie normally brings it back without one: test_browser_cookie).
"""
from __future__ import annotations

import shutil
import signal
from pathlib import Path
from typing import NamedTuple

import pytest
from browser_support import AppServer, browser, grade_option, sample_embeddings, screenshot, wait_ready, wait_until  # noqa: F401
from playwright.sync_api import expect

from labeler.corpus import load_corpus
from labeler.paths import SAMPLE_CORPUS
from labeler_pages._cards import grade_widget
from labeler_storage import open_store

pytestmark = pytest.mark.browser
expect.set_options(timeout=60_000)

STEP_MS = 90_000
FIRST_PAGE_MS = 180_000  # a new server process loads the model and the index on its first page run
QID = "q-0001"
PASSWORD = "correct horse battery"
CONNECTED = '[data-testid="stApp"][data-test-connection-state="CONNECTED"]'
SIGN_IN = ".st-key-sign_in_email input"


class Deployment:
    """One deployment of the module: its LABELER_HOME (the sample embeddings copied in), its database and,
    in team mode, the two annotators. Its server is started by the first case that needs it and left
    running by each case for the next: the server a case restarted is the next case's, so a case pays one
    server start (its restart), not two. Each case has a collection of its own (`?set=`) holding q-0001."""

    def __init__(self, team: bool, home: Path, url: str) -> None:
        self.team, self.home, self.url = team, home, url
        self.server: AppServer | None = None

    def start(self, port: int | None = None) -> AppServer:
        """A server on the deployment (on `port`: a restart, where the open tabs reconnect); AppServer
        copies os.environ when it is made, so the deployment's environment is set around it."""
        with pytest.MonkeyPatch.context() as env:
            env.setenv("LABELER_TEAM", "1" if self.team else "0")
            env.delenv("STREAMLIT_SECRETS_FILES", raising=False)
            env.delenv("LABELER_CORPUS", raising=False)
            if self.team:
                env.setenv("LABELER_DB_URL", self.url)
            else:
                env.delenv("LABELER_DB_URL", raising=False)
            return AppServer(self.home, port=port)

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None


@pytest.fixture(scope="module")
def deployments(request, sample_embeddings, tmp_path_factory):
    """The module's deployments by name, made on first use; their servers are stopped at its end."""
    made: dict[str, Deployment] = {}

    def get(name: str) -> Deployment:
        if name not in made:
            team = name.startswith("team")
            home = tmp_path_factory.mktemp(f"restart-{name}")
            shutil.copytree(sample_embeddings, home / "cache")
            if team:  # a database of the session's PostgreSQL server
                postgres = request.getfixturevalue("postgres_server")
                url = postgres.database()
                request.addfinalizer(lambda: postgres.give_back(url))
            else:
                url = f"sqlite:///{home / 'labeler.db'}"
            if team:
                with open_store(url) as store:
                    for who in ("idle@example.org", "busy@example.org"):
                        store.accounts.add_user(who, "annotator", password=PASSWORD)
            made[name] = Deployment(team, home, url)
        return made[name]

    yield get
    for deployment in made.values():
        deployment.stop()


@pytest.fixture(params=["local-sqlite", "team-postgresql"])
def deployment(request, deployments) -> Deployment:
    return deployments(request.param)


class Where(NamedTuple):
    """A case's database and collection."""

    url: str
    collection: str


def saved(where: Where, who: str) -> dict[str, int]:
    with open_store(where.url) as store:
        return {j.doc_id: j.grade for j in store.judgments.list(query_id=QID, annotator=who, collection=where.collection)}


def sign_in(page, who: str) -> None:
    page.locator(SIGN_IN).fill(who)
    page.locator(".st-key-sign_in_password input").fill(PASSWORD)
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page.get_by_test_id("stSidebar")).to_contain_text(f"Signed in as {who}")


def open_tab(browser, server: AppServer, team: bool, who: str, collection: str):
    page = browser.new_context(viewport={"width": 1360, "height": 1000}).new_page()
    page.set_default_timeout(STEP_MS)
    page.goto(f"{server.url}/?q={QID}&set={collection}" + ("" if team else f"&annotator={who}"))
    if team:
        sign_in(page, who)
    expect(page.locator(".st-key-cand-5")).to_be_visible(timeout=FIRST_PAGE_MS)
    wait_ready(page)
    return page


def doc_of(page, n: int) -> str:
    return page.locator(f".st-key-cand-{n} small code").first.inner_text()


CLICK_AT_ONCE = """([n, grade]) => {
  const control = document.querySelector('.st-key-cand-' + n + ' [class*="st-key-grade-"]');
  [...control.querySelectorAll('button[role=radio]')].find((b) => b.textContent.trim().startsWith(grade + ' ')).click();
  return [...control.classList].find((c) => c.startsWith('st-key-grade-')).slice('st-key-'.length);
}"""


def sample_doc_ids() -> list[str]:
    return [d.doc_id for d in load_corpus(SAMPLE_CORPUS).documents]


def named(page, doc: str) -> bool:
    """The page says this document's grade was not saved."""
    return page.get_by_test_id("stAlert").filter(has_text="Not saved").filter(has_text=doc).count() > 0


def shows_selected(option) -> bool:
    """One such grade button on the page (not the old one beside the new while a rerun draws the card anew),
    and it is selected: read in one step, as the page stands."""
    return option.evaluate_all("els => els.length === 1 && els[0].getAttribute('aria-checked') === 'true'")


def signed_out(page) -> bool:
    """Team mode: the tab shows the sign-in form instead of the question (nothing shows as saved)."""
    return page.locator(SIGN_IN).count() > 0 and page.locator(".st-key-cand-0").count() == 0


class Tab:
    """One annotator's tab and the clicks it made: (doc, grade) in order."""

    def __init__(self, page, who: str, collection: str) -> None:
        self.page, self.who, self.collection, self.clicks = page, who, collection, []

    def click(self, n: int, grade: int, *, redrawing: bool = False) -> tuple[str, int] | None:
        """Click grade `grade` on card n; None when the page refused it (a grade above it not answered
        yet will re-fill that card: most likely relevant first), so nothing was sent. `redrawing`: the page
        may be redrawn under the click (a reconnect's run): the document is the one whose grade control took
        the click (its key names it: pages/_cards.py grade_widget), as a caption read before the click could
        name the document the card held before the redraw."""
        if redrawing:
            control = self.page.evaluate(CLICK_AT_ONCE, [n, grade])
            doc = next(d for d in sample_doc_ids() if grade_widget(self.collection, QID, d) == control)
        else:
            doc = doc_of(self.page, n)
            grade_option(self.page, n, grade).click()
        if self.page.locator(f".st-key-cand-{n} [class*='st-key-grade-'].labeler-wait").count():
            return None
        self.clicks.append((doc, grade))
        return doc, grade

    def settle(self, where: Where, doc: str, grade: int, *, may_sign_out: bool) -> str:
        """Wait until the click is saved, named as not saved, or (team, after a restart) signed out."""
        outcome = {}

        def decided() -> bool:
            if saved(where, self.who).get(doc) == grade:
                outcome["it"] = "saved"
            elif named(self.page, doc):
                outcome["it"] = "named"
            elif may_sign_out and signed_out(self.page):
                outcome["it"] = "signed out"
            return bool(outcome)

        wait_until(decided, f"{self.who}'s grade {grade} on {doc}: saved, or named as not saved",
                   timeout=FIRST_PAGE_MS / 1000)
        return outcome["it"]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_restart_grade_saved_or_named(deployment, sig, browser):
    team = deployment.team
    where = Where(deployment.url, f"restart-{sig.name.lower()}")
    with open_store(where.url) as store:
        store.questions.add("How many vacation days do new employees get?", collection=where.collection, query_id=QID)
    users = ("idle@example.org", "busy@example.org") if team else ("idle", "busy")
    server, deployment.server = deployment.server or deployment.start(), None  # this case's until it hands one back
    tabs = []
    try:
        server.wait_healthy()
        tabs[:] = [Tab(open_tab(browser, server, team, who, where.collection), who, where.collection) for who in users]
        idle, busy = tabs
        doc, grade = busy.click(0, 1)
        wait_until(lambda: saved(where, busy.who).get(doc) == grade, "the grade before the restart saved")
        wait_ready(busy.page)
        pending = [busy.click(1, 2)]  # and at once the server dies under it
        server.stop(sig)
        with open_store(where.url) as store:  # while it is down, the idle tab's annotator grades card 6 elsewhere
            store.judgments.set(QID, written := doc_of(idle.page, 6), 0, annotator=idle.who, collection=where.collection)
        server = deployment.start(port=server.port)
        server.wait_healthy()
        busy.page.wait_for_selector(CONNECTED, timeout=STEP_MS)
        if busy.page.locator(".st-key-cand-2").count():  # the old page, before its rerun: click at once
            pending.append(busy.click(2, 3, redrawing=True))
        for doc, grade in filter(None, pending):
            busy.settle(where, doc, grade, may_sign_out=team)
        # The idle tab runs its page anew on reconnecting, with no click: it shows the grade written
        # meanwhile (in team mode, the sign-in form: the restart ended its session).
        wait_until(lambda: signed_out(idle.page) if team else shows_selected(grade_option(idle.page, 6, 0)),
                   "the idle tab's page run anew after the reconnect", timeout=FIRST_PAGE_MS / 1000)
        for tab in tabs:
            if team:  # the new process holds no sign-in: each tab shows the form, without a click
                wait_until(lambda: signed_out(tab.page), f"{tab.who}: the sign-in form", timeout=FIRST_PAGE_MS / 1000)
                sign_in(tab.page, tab.who)
            expect(tab.page.locator(".st-key-cand-5")).to_be_visible(timeout=FIRST_PAGE_MS)
            wait_ready(tab.page)
            for n, grade in ((3, 3), (4, 2), (5, 1)) if tab is busy else ((2, 3), (3, 3), (4, 2), (5, 1)):
                doc, grade = tab.click(n, grade)
                outcome = tab.settle(where, doc, grade, may_sign_out=False)
                assert outcome == "saved", f"{tab.who}: a click on a page run anew after the restart was {outcome}"
                wait_ready(tab.page)
        # Keys work again too: a digit grades the focused card (the one marked ▶).
        focused = next(n for n in range(30) if idle.page.locator(f".st-key-cand-{n}").inner_text().startswith("▶"))
        idle.page.get_by_role("heading", level=1).first.click()
        idle.page.keyboard.press("1")
        idle.clicks.append(key := (doc_of(idle.page, focused), 1))
        assert idle.settle(where, *key, may_sign_out=False) == "saved"
        wait_ready(idle.page)
        # Nothing shows as selected that is not saved: every card's selected grade is in the database.
        for tab in tabs:
            mine = saved(where, tab.who)
            assert tab is busy or mine[written] == 0
            for n in range(7):
                shown = tab.page.locator(f".st-key-cand-{n} [class*='st-key-grade-'] button[aria-checked=true]")
                if shown.count():
                    grade = int(shown.first.inner_text().split(" · ")[0])
                    assert mine.get(doc_of(tab.page, n)) == grade, f"{tab.who}: card {n} shows {grade}, saved {mine}"
        screenshot(busy.page, f"restart-{'team' if team else 'local'}-{sig.name}", full_page=False)
        deployment.server, server = server, None  # left running: the next case's server
    except BaseException:
        for tab in tabs:
            screenshot(tab.page, f"FAILED-restart-{tab.who}", full_page=True)
        print(server.log())
        raise
    finally:
        for tab in tabs:
            tab.page.context.close()
        if server is not None:
            server.stop()
