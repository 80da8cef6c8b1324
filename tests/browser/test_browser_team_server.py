"""The team server (team_app.py, what `labeler app --team` runs) in Chromium.

1. An admin's upload still arrives through its gate on uploads (only sessions signed in as someone
   who may upload may PUT a file), and imports.
2. A signed-in tab does not outlive its sign-in: the Label page's judging area is
a fragment, whose reruns skip the entry script and its sign-in check, so pages/_common.guarded checks
the session again there. A user demoted or disabled while their tab is open (either ends their
sessions) gets the sign-in form at their next keystroke in that area, not only at their next grade.

Both run on one module server (test_browser_team's `team_site`: the demo golden set, users of each test's own)."""
from __future__ import annotations

import pytest
from browser_support import sample_embeddings, screenshot, wait_ready  # noqa: F401 - sample_embeddings: a fixture
from playwright.sync_api import expect
from labeler_storage import open_store
from test_browser_team import (FIRST_PAGE_MS, PASSWORD, browser, card, expect_sign_in_form,  # noqa: F401 - fixtures
                               expect_signed_in, new_page, run_journey, sidebar_go, sign_in_with_password, team_site,
                               visible)

pytestmark = pytest.mark.browser


def _search(page, words: str) -> None:
    """Type into the Label page's corpus search (inside the judging fragment) and let it rerun."""
    box = page.get_by_label("Search the corpus by keyword or document id")
    box.fill(words)
    box.press("Enter")


def _open_signed_in(page, url: str, email: str, role: str) -> None:
    page.goto(url)
    wait_ready(page)
    sign_in_with_password(page, email)
    expect_signed_in(page, email, role)


def test_fragment_reruns_recheck_the_session(team_site, browser):
    server = team_site
    store = open_store(server.home / "labeler.db")
    store.accounts.add_user("ann@example.org", "annotator", password=PASSWORD)
    page = new_page(browser)

    def journey() -> None:
        _open_signed_in(page, server.url, "ann@example.org", "annotator")
        visible(card(page, "cand-0"), FIRST_PAGE_MS)
        _search(page, "parental leave")
        visible(card(page, "hit-0"))  # the fragment answers while she is signed in

        # Demoted to viewer (a new role ends her sessions): her next search, a fragment rerun, asks her
        # to sign in again; then she is a viewer.
        store.accounts.update_user("ann@example.org", role="viewer")
        _search(page, "vacation days")
        expect_sign_in_form(page)
        visible(page.get_by_text("Your session has ended"))
        sign_in_with_password(page, "ann@example.org")
        expect_signed_in(page, "ann@example.org", "viewer")
        visible(card(page, "cand-0"), FIRST_PAGE_MS)
        expect(card(page, "cand-0").get_by_role("radio", name="0 · Not relevant")).to_be_disabled()

        # Disabled: the next search shows the sign-in form, and no search result.
        store.accounts.update_user("ann@example.org", disabled=True)
        _search(page, "remote work")
        expect_sign_in_form(page)
        expect(card(page, "hit-0")).to_have_count(0)
        screenshot(page, "team-disabled-in-fragment", full_page=False)

    try:
        run_journey("team-recheck", server, [page], journey, keep_server=True)
    finally:
        store.close()


def test_an_admins_upload_passes_the_team_servers_gate(team_site, browser, tmp_path):
    server = team_site
    store = open_store(server.home / "labeler.db")
    store.accounts.add_user("boss@example.org", "admin", password=PASSWORD)
    golden = tmp_path / "golden.jsonl"
    golden.write_text('{"query_id": "up-1", "question": "How many vacation days?", "relevance": {"leave-001": 2}}\n')
    page = new_page(browser)

    def journey() -> None:
        _open_signed_in(page, server.url, "boss@example.org", "admin")
        sidebar_go(page, "Golden set")
        page.locator("[class*=st-key-golden_upload] input[type=file]").set_input_files(str(golden))
        page.get_by_role("button", name="Import").click()
        visible(page.get_by_text("Imported 1 questions"))
        assert store.questions.get("up-1") is not None

    try:
        run_journey("team-upload", server, [page], journey, keep_server=True)
    finally:
        store.close()
