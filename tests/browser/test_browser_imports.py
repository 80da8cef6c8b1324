"""Issue 19, as the new user met it, in Chromium: five questions written on the Label page, then the
demo file uploaded on the Golden set page. The preview names the five conflicts, nothing is
applied until the user chooses, and the five questions and their grades come out unchanged; the
demo offer is still there and opens the demo set in its own collection."""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from browser_support import AppServer, launch_chromium, sample_embeddings, screenshot, wait_ready  # noqa: F401
from playwright.sync_api import expect

from labeler.paths import SAMPLE_CORPUS
from labeler_storage import open_store

pytestmark = pytest.mark.browser
STEP_MS = 60_000
expect.set_options(timeout=STEP_MS)
MINE = ("How many sick days can I take in a year?", "Can I work from another country?",
        "Who approves my expense report?", "Is there a parking allowance?", "What is the dress code on Fridays?")


@pytest.fixture
def app(sample_embeddings):
    home = Path(os.environ["LABELER_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    shutil.copytree(sample_embeddings, home / "cache", dirs_exist_ok=True)
    server = AppServer(home)
    try:
        server.wait_healthy()
        yield server
    finally:
        server.stop()


def test_uploading_the_demo_file_over_five_written_questions_changes_none_of_them(app, playwright):
    browser = launch_chromium(playwright)
    page = browser.new_context(viewport={"width": 1360, "height": 900}).new_page()
    page.set_default_timeout(STEP_MS)
    try:
        page.goto(app.url + "/?annotator=asha")
        wait_ready(page, timeout=180_000)
        for text in MINE:
            box = page.get_by_role("textbox", name="Question", exact=True)
            if box.is_hidden():  # once questions exist the form is a popover beside the title
                page.get_by_role("button", name="New question").click()
            box.fill(text)
            page.get_by_role("button", name="Add question").click()
            expect(page.get_by_role("heading", name=text)).to_be_visible()
            wait_ready(page)
        page.locator(".st-key-cand-0").get_by_role("radio", name="3 · Answers fully").click()
        expect(page.locator(".st-key-cand-0 button[role=radio][aria-checked=true]")).to_be_visible()
        wait_ready(page)
        with open_store(app.home / "labeler.db") as s:
            before = {(q.question.query_id, q.question.question, q.question.author,
                       tuple((j.doc_id, j.annotator, j.grade) for j in q.judgments)) for q in s.questions.list()}
        assert [qid for qid, *_ in sorted(before)] == ["q-0001", "q-0002", "q-0003", "q-0004", "q-0005"]

        page.get_by_test_id("stSidebarNav").get_by_role("link", name="Golden set", exact=True).click()
        wait_ready(page)
        page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(SAMPLE_CORPUS / "golden.jsonl"))
        expect(page.get_by_text("62 questions for collection 'default': 57 new, 0 identical, 5 conflicting")
               ).to_be_visible()
        expect(page.get_by_role("button", name="Import")).to_be_disabled()  # no choice made: nothing can apply
        page.get_by_text("Import them as new questions").click()
        page.get_by_role("button", name="Import").click()
        expect(page.get_by_test_id("stAlertContentSuccess").filter(
            has_text="57 new, 5 added as new questions (fresh ids)")).to_be_visible()
        expect(page.get_by_text("67 of 67 questions")).to_be_visible()
        expect(page.get_by_role("button", name="Import")).to_have_count(0)  # the box emptied: no second import
        screenshot(page, "imports-preview-and-choice", full_page=False)
        with open_store(app.home / "labeler.db") as s:
            after = {(q.question.query_id, q.question.question, q.question.author,
                      tuple((j.doc_id, j.annotator, j.grade) for j in q.judgments)) for q in s.questions.list()
                     if q.question.author == "asha"}
            assert after == before
            renamed = {q.extra.get("source_id"): q.question for q in (s.questions.get(f"q-{n:04d}")
                                                                      for n in range(63, 68))}
            assert renamed["q-0001"] == "How many vacation days do I get?"

        # The demo offer is still there, and opens the demo set beside the user's own collection.
        page.get_by_test_id("stSidebarNav").get_by_role("link", name="Corpus", exact=True).click()
        wait_ready(page)
        page.get_by_role("button", name="Open the demo golden set").click()
        expect(page.get_by_text(re.compile("Opened the demo golden set in its own collection, 'demo'"))).to_be_visible()
        assert "set=demo" in page.url
        with open_store(app.home / "labeler.db") as s:
            assert len(s.questions.index()) == 67 and len(s.questions.index(collection="demo")) == 62
    except BaseException:
        screenshot(page, "FAILED-imports")
        raise
    finally:
        browser.close()
