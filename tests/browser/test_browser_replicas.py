"""Two app servers on one PostgreSQL database, two annotators (one per server), in Chromium: blind
judging hides asha's grade from ben until he has finished the question; their disagreement reaches
the adjudication queue; the admin's final grade is what the export carries."""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from browser_support import AppServer, grade_option, launch_chromium, sample_embeddings, wait_ready, wait_until  # noqa: F401
from playwright.sync_api import expect

expect.set_options(timeout=60_000)

from conftest import new_db_url
from labeler_storage import open_store

pytestmark = pytest.mark.browser
STEP_MS = 90_000
PASSWORD = "correct horse battery"


@pytest.fixture
def replicas(request, sample_embeddings, tmp_path, monkeypatch):
    """Two team-mode app servers sharing one PostgreSQL database (and nothing else but the cache)."""
    url = new_db_url(request, "postgresql", tmp_path / "unused.db")
    with open_store(url) as store:
        for email, role in (("admin@example.org", "admin"), ("asha@example.org", "annotator"),
                            ("ben@example.org", "annotator")):
            store.accounts.add_user(email, role, password=PASSWORD)
        store.questions.add("How many vacation days do new employees get?", query_id="q-0001",
                           author="admin@example.org")
    monkeypatch.setenv("LABELER_DB_URL", url)
    monkeypatch.setenv("LABELER_TEAM", "1")
    monkeypatch.delenv("STREAMLIT_SECRETS_FILES", raising=False)
    servers = []
    for name in ("a", "b"):
        home = tmp_path / name  # each replica its own data directory: they share only the database
        shutil.copytree(sample_embeddings, home / "cache")
        servers.append(AppServer(home))
    try:
        for server in servers:
            server.wait_healthy()
        yield url, servers
    finally:
        for server in servers:
            server.stop()


def signed_in_page(browser, server: AppServer, email: str, path: str = "/?q=q-0001"):
    page = browser.new_context(viewport={"width": 1360, "height": 1000}).new_page()
    page.set_default_timeout(STEP_MS)
    page.goto(server.url + path)
    page.locator(".st-key-sign_in_email input").fill(email)
    page.locator(".st-key-sign_in_password input").fill(PASSWORD)
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page.get_by_test_id("stSidebar")).to_contain_text(f"Signed in as {email}", timeout=STEP_MS)
    wait_ready(page)
    return page


def test_two_replicas_blind_judging_disagreement_and_adjudication(replicas, playwright):
    url, (a, b) = replicas
    browser = launch_chromium(playwright)
    try:
        asha = signed_in_page(browser, a, "asha@example.org")
        ben = signed_in_page(browser, b, "ben@example.org")
        expect(asha.locator(".st-key-cand-0")).to_be_visible()
        doc = asha.locator(".st-key-cand-0 small code").first.inner_text()
        grade_option(asha, 0, 3).click()  # on server A
        wait_ready(asha)
        expect(grade_option(asha, 0, 3)).to_have_attribute("aria-checked", "true")
        with open_store(url) as store:
            wait_until(lambda: [(j.doc_id, j.grade) for j in store.judgments.list(annotator="asha@example.org")] == [(doc, 3)],
                       "asha's grade saved on server A")
        # On server B a rerun reads asha's grade from the database, but ben judges blind. (A rerun, not a
        # reload: a built-in sign-in lives in the browser tab's session, and a reload signs out.)
        ben.locator(".st-key-next-question button").click()
        wait_ready(ben)
        ben_card = ben.locator(".st-key-cand-0")
        expect(ben_card).to_contain_text(doc, timeout=STEP_MS)
        expect(ben.get_by_text(re.compile("Blind judging"))).to_be_visible()
        expect(ben_card).not_to_contain_text("others:")
        grade_option(ben, 0, 0).click()  # ben disagrees ...
        wait_ready(ben)
        ben.locator("[class*='st-key-unanswerable-'] button").first.click()  # ... and finishes: nothing here answers it
        wait_ready(ben)
        expect(ben.locator(".st-key-cand-0")).to_contain_text(re.compile("others: asha@\u2060?example\\.org: 3"))  # finished: now shown
        # The disagreement reaches the adjudication queue; the admin (on server A) sets the final grade.
        admin = signed_in_page(browser, a, "admin@example.org", "/")
        admin.get_by_test_id("stSidebarNav").get_by_role("link", name="Adjudicate", exact=True).click()
        wait_ready(admin)
        expect(admin.get_by_text(re.compile(r"Queue \(1 open of 1\)"))).to_be_visible()
        admin.get_by_role("radiogroup").get_by_text("2", exact=True).click()
        admin.get_by_role("textbox", name="Note (why this grade)").fill("states the allowance, not the pro-rating")
        admin.get_by_role("button", name="Set the final grade").click()
        wait_ready(admin)
        expect(admin.get_by_text(f"Final grade 2 set for {doc} on q-0001.")).to_be_visible()
        with open_store(url) as store:
            [q] = store.golden.export().queries
            assert q.relevance[doc] == 2
            assert q.extra["adjudicated"][doc]["by"] == "admin@example.org"
    finally:
        browser.close()
