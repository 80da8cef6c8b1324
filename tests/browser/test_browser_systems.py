"""In Chromium: declare a search endpoint on the Evaluate page, test-query it, run it and see
judged@10; follow "Judge the holes" to the Label page and judge one; run it again: judged@10 rises.
The endpoint is the sample corpus's own pipeline served over HTTP on localhost (labeler_edge.serve)."""
from __future__ import annotations

import os
import re
import shutil
import threading
from pathlib import Path

import pytest
from browser_support import AppServer, grade_option, launch_chromium, sample_embeddings, screenshot, wait_ready, wait_until  # noqa: F401
from playwright.sync_api import expect

from labeler_app.access import local_actor
from conftest import import_demo
from labeler.config import RunConfig
from labeler.corpus import load_corpus
from labeler.paths import SAMPLE_CORPUS
from labeler_edge.serve import make_server, open_service
from labeler_storage import open_store

pytestmark = pytest.mark.browser
STEP_MS = 90_000


@pytest.fixture
def setup(sample_embeddings, playwright):
    home = Path(os.environ["LABELER_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    shutil.copytree(sample_embeddings, home / "cache", dirs_exist_ok=True)
    store = open_store(home / "labeler.db")
    import_demo(store)
    service = open_service(SAMPLE_CORPUS, RunConfig(), cache_root=home / "cache")
    endpoint = make_server(service, port=0)
    threading.Thread(target=endpoint.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    app = AppServer(home)
    browser = launch_chromium(playwright)
    try:
        app.wait_healthy()
        page = browser.new_context(viewport={"width": 1360, "height": 1000}).new_page()
        page.set_default_timeout(STEP_MS)
        yield app, store, page, f"http://127.0.0.1:{endpoint.server_port}/search"
    finally:
        browser.close()
        app.stop()
        endpoint.shutdown()
        endpoint.server_close()
        service.close()


def judged_at_10(page, store) -> float:
    """judged@10 of the latest run, once the page shows its metrics table (the grid draws on a
    canvas, so the figure is read from the run the page saved)."""
    expect(page.locator(".st-key-metrics")).to_be_visible()
    return store.runs.list()[0].summary["metrics"]["judged@10"]


def test_declare_an_endpoint_run_it_and_judge_its_holes(setup):
    app, store, page, url = setup
    page.goto(app.url + "/evaluate?annotator=asha")
    wait_ready(page)
    screenshot(page, "systems-evaluate")
    page.get_by_text("HTTP endpoint", exact=True).click()
    wait_ready(page)
    declaration = (f'name = "served"\nurl = "{url}"\n[body]\nquery = "{{query}}"\nk = "{{k}}"\n'
                   '[response]\nhits = "hits"\nid = "doc_id"\nscore = "score"\n')
    page.get_by_role("textbox", name="Declaration (TOML)").fill(declaration)
    page.get_by_role("textbox", name="Test question").fill("How many vacation days do I get?")
    page.get_by_role("button", name="Test query").click()
    wait_ready(page)
    expect(page.get_by_text(re.compile(r"HTTP 200 in \d+ ms · 10 hits mapped"))).to_be_visible()
    screenshot(page, "systems-test-query")
    page.get_by_role("button", name="Save").click()
    wait_ready(page)
    expect(page.get_by_text("Saved system 'served'.")).to_be_visible()
    page.get_by_role("button", name="Run evaluation").click()
    wait_ready(page)
    expect(page.get_by_text(re.compile(r"Run #1 saved \(system served"))).to_be_visible()
    first = judged_at_10(page, store)
    screenshot(page, "systems-run")
    assert 0 < first < 1
    link = page.get_by_role("link", name=re.compile("Judge the holes: "))
    link.click()
    wait_ready(page)
    expect(page.get_by_text(re.compile("Judging the holes: "))).to_be_visible()
    card = page.locator(".st-key-cand-0")
    expect(card).to_contain_text("run 1 #")
    grade_option(page, 0, 0).click()
    wait_ready(page)
    screenshot(page, "systems-holes")
    wait_until(lambda: any(j.annotator == "asha" for j in store.judgments.list()), "the hole's grade saved")
    page.goto(app.url + "/evaluate?annotator=asha")
    wait_ready(page)
    page.get_by_text("HTTP endpoint", exact=True).click()
    wait_ready(page)
    page.get_by_role("button", name="Run evaluation").click()
    wait_ready(page)
    expect(page.get_by_text(re.compile(r"Run #2 saved"))).to_be_visible()
    assert judged_at_10(page, store) > first
