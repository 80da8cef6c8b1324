"""In Chromium: on the Judges page, declare a judge against a local OpenAI-compatible server (the rule
server of tests/openai_support.py: word overlap, not a language model), test it on one pair, save it,
grade the pairs people graded and the holes of a run, and read the confusion matrix off the page."""
from __future__ import annotations

import re

import pytest
from browser_support import AppServer, app_home, launch_chromium, sample_embeddings, screenshot, wait_ready  # noqa: F401
from playwright.sync_api import expect

from judges_support import N_HOLES, N_QUESTIONS, demo_with_run
from labeler.judges import judge_spec_from_dict
from labeler_app.judge_runs import collection_calibration
from openai_support import rule_server
from labeler_storage import CollectionStore, open_store

pytestmark = pytest.mark.browser


@pytest.fixture
def setup(app_home, playwright):
    """The demo collection with a saved run, the app on it, Chromium, and the rule server."""
    run_id = demo_with_run()
    app = AppServer(app_home)
    browser = launch_chromium(playwright)
    try:
        with rule_server() as server:
            app.wait_healthy()
            page = browser.new_context(viewport={"width": 1360, "height": 1000}).new_page()
            page.set_default_timeout(90_000)
            yield app, page, server, run_id, app_home / "labeler.db"
    finally:
        browser.close()
        app.stop()


def _press(page, button: str, shows) -> None:
    """Click the button and wait for the page to show `shows` (a text or a pattern)."""
    page.get_by_role("button", name=button).click()
    wait_ready(page)
    expect(page.get_by_text(shows)).to_be_visible()


def test_declare_a_judge_test_it_judge_holes_and_read_the_confusion_matrix(setup):
    app, page, server, run_id, db = setup
    page.goto(f"{app.url}/judges?annotator=asha&run={run_id}")
    wait_ready(page)
    page.get_by_role("textbox", name="Declaration (TOML or JSON)").fill(
        f'name = "rule"\nkind = "openai"\nmodel = "rule-1"\nurl = "{server.url}"\nconcurrency = 2\n')
    _press(page, "Test on one pair", re.compile(r"Grade [0-3] from rule \(rule-1\)\."))
    _press(page, "Save", "Saved judge 'rule'.")
    _press(page, "Grade the pairs people graded", re.compile(r"judge rule: \d+ pairs graded, 0 already graded"))
    _press(page, "Judge the holes", re.compile(f"judge rule: {N_QUESTIONS * N_HOLES} pairs graded"))
    expect(page.get_by_text(re.compile("^(below|passes) the team.s bars"))).to_be_visible()
    with open_store(db) as s:
        store = CollectionStore(s, "default")
        cal = collection_calibration(store, judge_spec_from_dict(s.machine.judge_specs()["rule"]), bootstrap=0)
    grid = page.locator(".st-key-confusion")
    expect(grid).to_be_visible()
    grid.scroll_into_view_if_needed()
    screenshot(page, "judges-page")
    shown = [[grid.get_by_test_id(f"glide-cell-{col}-{row}").inner_text().strip() for col in range(1, 5)]
             for row in range(4)]
    assert shown == [[str(n) for n in row] for row in cal.calibration.confusion]
    assert sum(map(sum, cal.calibration.confusion)) == cal.calibration.pairs > 0
