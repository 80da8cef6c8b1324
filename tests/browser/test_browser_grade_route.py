"""A grade key saved through the grade route (pages/_grade_route.py) in Chromium, local mode on SQLite: the
card shows the grade saved once the route has answered, the rerun after it moves the focus on, and a key without a ticket (as after a server restart) still grades, by the
click alone; and a click the server hears only after it finished the next run (N pressed, the click on the
old question's card) is saved, with the picker showing the question whose cards are on screen."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from browser_support import AppServer, grade_option, launch_chromium, sample_embeddings, screenshot, wait_ready  # noqa: F401
from playwright.sync_api import expect

from labeler_pages._grade_route import GRADE_ROUTE
from labeler_storage import open_store

pytestmark = pytest.mark.browser
QID = "q-0001"
# What the key queue acts on, printed when the test fails: each focus mark (a stale one stays while a
# run redraws), whether it holds a ticket, and the focused card's grade options.
MARKS = """() => [...document.querySelectorAll('[data-focus-mark]')].map((m) => ({
  card: m.dataset.focusMark, run: m.dataset.run, ticket: m.hasAttribute('data-ticket'),
  options: document.querySelectorAll('.st-key-cand-' + m.dataset.focusMark + ' [class*="st-key-grade-"] button[role=radio]').length,
  keys: document.body.classList.contains('labeler-keys'), queued: (window.__labelerKeys || []).length}))"""
FOCUSED = "() => Number(document.querySelector('[data-focus-mark]')?.dataset.focusMark ?? -1)"


def _history(url: str, doc: str) -> list[tuple[int, str]]:
    with open_store(url) as store:
        return [(e.grade, e.annotator) for e in store.judgments.history(QID) if e.doc_id == doc]


def _hold_server_messages(page) -> dict:
    """Pass the app's websocket through, holding what the server sends while `held["on"]`: each held
    message is a call in `held["messages"]` that delivers it."""
    held = {"on": False, "messages": []}

    def route(ws) -> None:
        server = ws.connect_to_server()
        server.on_message(lambda m: held["messages"].append(lambda: ws.send(m)) if held["on"] else ws.send(m))
        ws.on_message(server.send)

    page.route_web_socket("**/_stcore/stream", route)
    return held


def _doc(page, n: int) -> str:
    return page.locator(f".st-key-cand-{n} small code").first.inner_text()


def test_grade_key_is_saved_by_the_route_before_the_rerun(sample_embeddings, playwright):
    home = Path(os.environ["LABELER_HOME"])
    shutil.copytree(sample_embeddings, home / "cache", dirs_exist_ok=True)
    url = f"sqlite:///{home / 'labeler.db'}"
    with open_store(url) as store:
        store.questions.add("How many vacation days do new employees get?", query_id=QID)
        store.questions.add("Can I work remotely from abroad?", query_id="q-0002")
    server = AppServer(home)
    browser = launch_chromium(playwright)
    page = browser.new_context(viewport={"width": 1360, "height": 1000}).new_page()
    held = _hold_server_messages(page)
    try:
        server.wait_healthy()
        page.goto(f"{server.url}/?q={QID}&annotator=ann")
        expect(page.locator(".st-key-cand-5")).to_be_visible(timeout=180_000)
        wait_ready(page)
        page.get_by_role("heading", level=1).first.click()  # the keys go to the page
        assert page.evaluate(FOCUSED) == 0
        first = _doc(page, 0)
        page.wait_for_selector("[data-focus-mark][data-ticket]", state="attached")  # the run's ticket is in
        with page.expect_response(lambda r: r.url.endswith(GRADE_ROUTE)) as answer:
            page.keyboard.press("2")
        assert answer.value.status == 204
        assert _history(url, first) == [(2, "ann")]  # written when the route answered
        expect(grade_option(page, 0, 2)).to_have_attribute("aria-checked", "true")
        expect(page.locator(".st-key-cand-0 [class*='st-key-grade-'].labeler-saving")).to_have_count(0)  # shown saved
        page.wait_for_function(f"({FOCUSED})() === 1")  # the rerun after it moved the focus on
        wait_ready(page)
        # Without a ticket (a server that does not know the page: after a restart) the key clicks the grade.
        second = _doc(page, 1)
        page.evaluate("document.querySelector('[data-focus-mark]').removeAttribute('data-ticket')")
        routed = []
        page.on("request", lambda r: routed.append(r.url) if r.url.endswith(GRADE_ROUTE) else None)
        page.keyboard.press("1")
        expect(page.locator(".st-key-cand-1 [class*='st-key-grade-'].labeler-saving")).to_have_count(0)
        expect(grade_option(page, 1, 1)).to_have_attribute("aria-checked", "true")
        wait_ready(page)
        assert _history(url, second) == [(1, "ann")] and routed == []
        screenshot(page, "grade-route", full_page=False)
        # A late click: the browser hears nothing of the N run until the server has finished it, and the
        # click on question 1's third card reaches the server after that run.
        third = _doc(page, 2)
        held["on"] = True
        page.keyboard.press("n")
        for _ in range(100):  # Playwright hands on the messages only while the test waits in a Playwright call
            if len(held["messages"]) > 20:
                break
            page.wait_for_timeout(100)
        page.wait_for_timeout(1500)  # the rest of the N run
        grade_option(page, 2, 3).click()
        page.wait_for_timeout(1000)  # the click's rerun starts on the server
        held["on"] = False
        for send in held.pop("messages"):
            send()
        page.wait_for_timeout(1500)
        wait_ready(page)
        assert _history(url, third) == [(3, "ann")]  # saved under the question whose card was clicked
        heading = page.get_by_role("heading", level=3).first.inner_text()
        picker = page.get_by_test_id("stSelectbox").filter(has_text="Question to label").locator("input").input_value()
        assert heading in picker, (heading, picker)  # the box shows the question the cards are of
        expect(grade_option(page, 2, 3)).to_have_attribute("aria-checked", "true")
    except BaseException:
        print("focus marks:", page.evaluate(MARKS))
        screenshot(page, "FAILED-grade-route", full_page=True)
        print(server.log())
        raise
    finally:
        browser.close()
        server.stop()
