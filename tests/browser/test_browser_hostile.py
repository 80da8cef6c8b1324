"""The hostile team database of test_hostile_pages.py in real Chromium: the admin signs in and visits
every page; no script the data carries runs (`window.__xss` stays unset, no dialog opens), no
request leaves for a loopback address other than the app's own (a `<style>` with `url()`, a
Markdown image, an `<img>`), and no link points anywhere but the app. One app start per database
engine: the team database on SQLite and on PostgreSQL."""
from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from browser_support import AppServer, launch_chromium, screenshot, wait_ready
from conftest import new_db_url

from test_hostile_pages import ADMIN, PASSWORD, build_hostile
from labeler_pages._pages import PAGES

LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]", "0.0.0.0"}


def _leak(url: str, port: int) -> bool:
    """A request to a loopback address other than the app itself, or to any host but Streamlit's own icon
    font (the page icon and the pages' Material icons come from fonts.gstatic.com)."""
    parts = urlsplit(url)
    if parts.scheme in ("data", "blob", "about"):
        return False
    if parts.hostname in LOOPBACK_HOSTS:
        return parts.port != port
    return parts.hostname != "fonts.gstatic.com"


@pytest.mark.browser
@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_browser_hostile_values_run_no_script_and_fetch_nothing_on_any_page(request, engine, playwright, tmp_path,
                                                                            monkeypatch):
    monkeypatch.setenv("LABELER_TEAM", "1")
    home = Path(os.environ["LABELER_HOME"])
    if engine == "postgresql":
        monkeypatch.setenv("LABELER_DB_URL", new_db_url(request, engine, home / "labeler.db"))
    build_hostile(tmp_path / "corpora")
    server = AppServer(home)
    browser = launch_chromium(playwright)
    try:
        server.wait_healthy()
        page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        requests: list[str] = []
        dialogs: list[str] = []
        links: list[str] = []
        ran: list[tuple[str, object]] = []  # (page, window.__xss after it)
        page.on("request", lambda r: requests.append(r.url))
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(server.url)
        wait_ready(page)
        page.get_by_label("E-mail").fill(ADMIN)
        page.get_by_role("textbox", name="Password").fill(PASSWORD)
        page.get_by_role("button", name="Sign in").click()
        wait_ready(page)
        for spec in PAGES:
            page.get_by_test_id("stSidebarNav").get_by_role("link", name=spec.title, exact=True).click()
            wait_ready(page)
            page.get_by_role("heading", name=spec.title, exact=True).wait_for()
            if spec.title == "Label":  # both questions, every card's full text opened (a <details>)
                for summary in page.locator("details > summary").all():
                    summary.click()
                page.get_by_role("button", name="Previous").first.click()
                wait_ready(page)
            if spec.title == "Corpus":  # the reader: one document's title and id
                page.get_by_label("Read a document").click()
                page.keyboard.press("Enter")
                wait_ready(page)
                page.locator(".st-key-browse-doc").wait_for()
            page.wait_for_timeout(500)  # an image or a style sheet would be fetched by now
            links += page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)")
            ran.append((spec.title, page.evaluate("() => window.__xss")))
            screenshot(page, f"hostile-{engine}-{spec.url_path}")
        assert [r for r in ran if r[1] is not None] == []
        assert dialogs == []
        assert [u for u in requests if _leak(u, server.port)] == []
        assert [u for u in links if not u.startswith(server.url)] == []  # no link made from data (autolinks too)
        # The values were there to be rendered, shown as text: the admin's address in the sidebar.
        assert page.get_by_test_id("stSidebar").get_by_text(ADMIN).count() >= 1
    finally:
        browser.close()
        server.stop()
