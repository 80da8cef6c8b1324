"""The judging order in Chromium: three grades re-order the ungraded cards and move the stopping
estimate, "Find more" adds a document neither retriever listed, a blind annotator sees no rank."""
from __future__ import annotations

import os
import re
import shutil
import signal

import pytest
from browser_support import AppServer, browser, grade_option, sample_embeddings, screenshot, wait_ready, wait_until  # noqa: F401
from playwright.sync_api import expect

from labeler_storage import open_store

pytestmark = pytest.mark.browser
STEP_MS = 60_000
QUESTION = "How many vacation days do new employees get?"


@pytest.fixture(scope="module")
def server(sample_embeddings, tmp_path_factory):
    """One app for the module, on an empty database beside a copy of the sample corpus's embeddings."""
    home = tmp_path_factory.mktemp("judging-order") / "home"
    shutil.copytree(sample_embeddings, home / "cache")
    app = AppServer(home)
    try:
        app.wait_healthy()
        yield app, open_store(home / "labeler.db")
    finally:
        app.stop()


@pytest.fixture
def page(browser):
    page = browser.new_page(viewport={"width": 1360, "height": 900})
    try:
        yield page
    finally:
        page.context.close()


def cards(page) -> list[str]:
    """The doc ids of the candidate cards, top to bottom."""
    return page.locator('[class*="st-key-cand-"]:not([class*="-grade"]) small code').all_inner_texts()


def stopping_line(page) -> str:
    return page.get_by_test_id("stCaptionContainer").filter(has_text=re.compile(r"^Stopping (estimate|check)")).first.inner_text()


def test_judging_order_three_grades_reorder_the_rest_and_find_more_goes_beyond_the_pool(server, page):
    app, store = server
    qid = store.questions.add(QUESTION, author="asha").query_id
    page.set_default_timeout(STEP_MS)
    page.goto(app.url + f"/?annotator=asha&q={qid}")
    wait_ready(page)
    page.locator(".st-key-cand-6").wait_for()
    pool = cards(page)
    before = stopping_line(page)
    assert "after 20 more grades without a relevant document" in before
    assert "model #" not in page.locator(".st-key-cand-0").inner_text()  # no grade yet: the pool's order
    for key in "300":  # the first card relevant, the next two not: each grade re-fits the model
        page.keyboard.press(key)
    wait_until(lambda: len(store.judgments.list(query_id=qid, annotator="asha")) == 3, "three grades saved")
    expect(page.get_by_text("now #4 of")).to_be_visible()
    wait_ready(page)
    expect(page.locator(".st-key-cand-3").get_by_text("model #1", exact=True)).to_be_visible()  # the model's first choice, focused
    after = cards(page)
    graded = {j.doc_id for j in store.judgments.list(query_id=qid, annotator="asha")}
    # The first grade stays where it was; each later digit graded the focused card as the re-order had filled it,
    # and a graded card stays: the three graded are the first three.
    assert after[0] == pool[0] and set(after[:3]) == graded
    rest = [d for d in pool if d not in graded]
    assert sorted(after[3:]) == sorted(rest) and after[3:] != rest  # the ungraded ones are in another order
    moved = stopping_line(page)
    assert moved != before and "after 8 more grades" in moved  # ten in a row without a relevant one: 2 so far

    page.get_by_role("button", name="Find more").click()
    found = page.locator('[class*="st-key-cand-"]:not([class*="-grade"])').filter(has_text="found beyond the pool")
    expect(found.first).to_be_visible()
    wait_ready(page)
    new = [d for d in cards(page) if d not in pool]
    assert new and found.count() == len(new)  # every card not in the pool is marked as found beyond it
    n = cards(page).index(new[0])
    grade_option(page, n, 2).click()  # judged like any candidate, saved at once
    wait_until(lambda: any(j.doc_id == new[0] and j.grade == 2 for j in store.judgments.list(query_id=qid, annotator="asha")),
               "the found document's grade saved")
    wait_ready(page)
    screenshot(page, "label-judging-order", full_page=False)

    store.accounts.set_setting("blind", True)  # the team judges blind: no model rank, no retriever rank before a grade
    page.reload()
    wait_ready(page)
    page.locator(".st-key-cand-6").wait_for()
    text = page.locator('[data-testid="stMain"]').inner_text()
    assert "model #" not in text
    ungraded = [i for i, d in enumerate(cards(page)) if d not in graded | {new[0]}]
    for i in ungraded:
        assert not re.search(r"(dense|BM25) #\d", page.locator(f".st-key-cand-{i}").inner_text())


def test_judging_order_a_click_on_a_card_the_pending_grade_will_refill_is_refused(server, page):
    app, store = server
    qid = store.questions.add("Who approves travel abroad?", author="asha").query_id
    page.set_default_timeout(STEP_MS)
    page.goto(app.url + f"/?annotator=asha&q={qid}")
    wait_ready(page)
    page.locator(".st-key-cand-6").wait_for()
    shown = cards(page)
    os.kill(app.proc.pid, signal.SIGSTOP)  # the first grade's answer (which re-fills cards 2, 3, ...) is not in yet
    try:
        grade_option(page, 0, 2).click()
        expect(page.locator(".st-key-cand-0 [class*='st-key-grade-'].labeler-saving")).to_be_visible()
        grade_option(page, 2, 1).click()  # card 3 may hold another document once the answer is in
        expect(page.locator(".st-key-cand-2 [class*='st-key-grade-'].labeler-wait")).to_be_visible()
        assert page.locator(".st-key-cand-2 [class*='st-key-grade-'] button[aria-checked=true]").count() == 0
    finally:
        os.kill(app.proc.pid, signal.SIGCONT)
    wait_until(lambda: store.judgments.list(query_id=qid, annotator="asha"), "the first grade saved")
    expect(page.locator(".labeler-saving")).to_have_count(0)
    wait_ready(page)
    assert [(j.doc_id, j.grade) for j in store.judgments.list(query_id=qid, annotator="asha")] == [(shown[0], 2)]
    grade_option(page, 2, 1).click()  # answered: the card shows what it holds now, and takes the click
    wait_until(lambda: len(store.judgments.list(query_id=qid, annotator="asha")) == 2, "the second grade saved")
    assert {j.doc_id: j.grade for j in store.judgments.list(query_id=qid, annotator="asha")}[cards(page)[2]] == 1
