"""The whole annotator journey in Chromium, against a temporary data directory.

open the app -> write a question -> grade two candidates (one relevant, one not) -> find a
document by keyword and grade it -> write a second question and mark it unanswerable -> reload
and see both -> download the golden JSONL and check it against the format -> run an evaluation
-> metrics and worst questions -> run a second config and compare. Screenshots of every page go
to test-artifacts/ (and docs/screenshots/ for the README).

Plus: a document holding `<script>` and `<img src=x onerror=alert(1)>` is shown inert.
"""
from __future__ import annotations

import re
import time

import pytest
from browser_support import AppServer, browser, screenshot, wait_ready  # noqa: F401 - browser: a fixture
from conftest import rows
from playwright.sync_api import expect

from labeler.golden import parse_golden_jsonl
from labeler_storage import DEFAULT_COLLECTION, open_store

pytestmark = pytest.mark.browser

# The first start embeds the 116 sample documents with the real model: poll generously.
FIRST_START_MS = 240_000
STEP_MS = 60_000


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """One app server for the module; its data directory starts empty (a true first start)."""
    server = AppServer(tmp_path_factory.mktemp("browser-home"))
    try:
        server.wait_healthy()
        yield server
    finally:
        server.stop()


@pytest.fixture
def page(browser, request):
    context = browser.new_context(viewport={"width": 1360, "height": 900}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(STEP_MS)
    try:
        yield page
    finally:
        # Also when the test body failed: teardown runs after the exception propagates.
        if request.session.testsfailed:
            try:
                screenshot(page, f"FAILED-{request.node.name}")
            except Exception:  # noqa: BLE001 - a screenshot must not hide the real failure
                pass
        context.close()


def expect_visible(locator, timeout: float = STEP_MS) -> None:
    locator.first.wait_for(state="visible", timeout=timeout)


def sidebar_go(page, name: str) -> None:
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=name).click()
    wait_ready(page)


def card(page, key: str):
    return page.locator(f".st-key-{key}")


def card_doc_id(page, key: str) -> str:
    """The doc id a candidate card shows in its caption (`code` element)."""
    return card(page, key).locator("small code").first.inner_text()


def choose(page, label: str, option: str) -> None:
    """Pick an option of a Streamlit selectbox by its label.

    The field shows typed text before anything is chosen, so its value alone proves nothing;
    after a blur, an uncommitted choice reverts to the previous one. So: choose, blur, check,
    and try again if the click landed while the list was still settling.
    """
    field = page.get_by_test_id("stSelectbox").filter(has_text=label).first.locator("input")
    for _ in range(3):
        field.click()
        field.fill(option)
        page.get_by_role("option", name=option, exact=True).click()
        field.blur()
        page.wait_for_timeout(300)
        wait_ready(page)
        if field.input_value() == option:
            return
    raise AssertionError(f"could not choose {option!r} in {label!r}: the field shows {field.input_value()!r}")


def scroll_to(locator) -> None:
    """Bring an element to the top of Streamlit's scrolling main block."""
    locator.first.evaluate("el => el.scrollIntoView({block: 'start'})")


def scroll_to_top(page) -> None:
    page.get_by_role("heading", level=1).first.scroll_into_view_if_needed()


def open_new_question_form(page) -> None:
    """Open the new-question form (a popover beside the title once questions exist)."""
    if page.get_by_role("textbox", name="Question", exact=True).is_hidden():
        page.get_by_role("button", name="New question").click()
    expect_visible(page.get_by_role("textbox", name="Question", exact=True))


def add_question(page, text: str, query_type: str) -> None:
    open_new_question_form(page)
    page.get_by_role("textbox", name="Question", exact=True).fill(text)
    page.get_by_test_id("stSelectbox").filter(has_text="Query type").first.click()
    page.keyboard.type(query_type)
    page.keyboard.press("Enter")
    page.get_by_role("button", name="Add question").click()
    expect_visible(page.get_by_role("heading", name=text))
    wait_ready(page)


def test_browser_journey(app, page):
    t0 = time.monotonic()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))

    # First start: the sample corpus opens and is indexed with no other step.
    page.goto(app.url)
    wait_ready(page, timeout=FIRST_START_MS)
    expect_visible(page.get_by_role("button", name="Load the demo golden set"), FIRST_START_MS)
    page.get_by_role("textbox", name="Annotator", exact=True).fill("asha")
    page.get_by_role("textbox", name="Annotator", exact=True).press("Enter")
    expect_visible(page.get_by_role("textbox", name="Question", exact=True))

    # Question 1 and its pooled candidates, with badges saying which retriever found them.
    add_question(page, "How many vacation days do new employees get?", "numeric-fact")
    expect_visible(card(page, "cand-0"))
    expect(card(page, "cand-0")).to_contain_text(re.compile(r"dense #\d|BM25 #\d"))  # retried: read mid-rerun it can be empty
    relevant_doc = card_doc_id(page, "cand-0")
    card(page, "cand-0").get_by_role("radio", name="3 · Answers fully").click()
    expect_visible(card(page, "cand-0").locator("button[role=radio][aria-checked=true]"))
    # Most likely relevant first: the grade's answer re-orders the ungraded cards below it, and until it is in
    # the page refuses a click on them ("re-ordering: click again"), as a person would see it: wait for it.
    expect(page.locator(".labeler-saving")).to_have_count(0)
    wait_ready(page)
    card(page, "cand-1").get_by_role("radio", name="0 · Not relevant").click()
    expect_visible(card(page, "cand-1").locator("button[role=radio][aria-checked=true]"))
    expect(page.locator(".labeler-saving")).to_have_count(0)
    # Read once graded (a graded card keeps its place): before the click the ungraded cards can still be
    # re-filled (the dense index joining the pool on a first start), so an earlier read could name another card.
    rejected_doc = card_doc_id(page, "cand-1")
    # Highlighted query terms in the snippet.
    assert card(page, "cand-0").locator("mark").count() > 0

    # Keyword search for a document no retriever surfaced, then grade it.
    shown = set(page.locator("[class*='st-key-cand-'] small code").all_inner_texts())
    added_doc = next(d for d in ("leave-002", "leave-003", "leave-004", "onboarding-001") if d not in shown)
    search = page.get_by_role("textbox", name="Search the corpus by keyword or document id")
    search.fill(added_doc)
    search.press("Enter")
    expect_visible(card(page, "hit-0"))
    wait_ready(page)
    assert card_doc_id(page, "hit-0") == added_doc
    card(page, "hit-0").get_by_role("radio", name="2 · Relevant").click()
    expect_visible(page.locator("[class*='st-key-cand-']").filter(has_text="added").filter(has_text=added_doc))
    screenshot(page, "label-full")
    scroll_to_top(page)
    screenshot(page, "label", full_page=False)

    # Question 2, marked unanswerable.
    add_question(page, "What is the office policy on keeping pet snakes at my desk?", "policy-lookup")
    page.get_by_role("button", name="Mark unanswerable").click()
    expect_visible(page.get_by_role("button", name="Unmark unanswerable"))

    # Reload: a new websocket session; the database and the URL (annotator, question) keep everything.
    page.reload()
    wait_ready(page)
    expect_visible(page.get_by_text(re.compile(r"You: 2 / 2 questions judged · team: 2 done \(1 unanswerable\)")))
    assert page.get_by_role("textbox", name="Annotator", exact=True).input_value() == "asha"
    expect_visible(page.get_by_role("button", name="Unmark unanswerable"))
    page.locator(".st-key-prev-question button").click()
    expect_visible(page.get_by_role("heading", name="How many vacation days do new employees get?"))
    expect_visible(card(page, "cand-0").locator("button[role=radio][aria-checked=true]"))

    # Golden set page: download the JSONL and check it against the format.
    sidebar_go(page, "Golden set")
    expect_visible(page.get_by_test_id("stMetric").filter(has_text="Questions"))
    with page.expect_download() as download:
        page.get_by_role("button", name="Golden JSONL").click()
    text = open(download.value.path(), encoding="utf-8").read()
    golden = parse_golden_jsonl(text, source="downloaded golden.jsonl")  # raises on any format error
    assert [q.query_id for q in golden.queries] == ["q-0001", "q-0002"]
    q1, q2 = golden.queries
    assert q1.relevance == {relevant_doc: 3, rejected_doc: 0, added_doc: 2}
    assert q1.query_type == "numeric-fact" and q1.annotators == ("asha",) and not q1.unanswerable
    assert q2.unanswerable and q2.relevance == {}
    scroll_to_top(page)
    screenshot(page, "golden-set", full_page=False)

    # Evaluate: run the default config, see metrics and the worst questions.
    sidebar_go(page, "Evaluate")
    page.get_by_role("button", name="Run evaluation").click()
    expect_visible(page.get_by_text(re.compile(r"Run #1 saved")))
    expect_visible(page.locator(".st-key-metrics [data-testid=stDataFrame]"))
    expect_visible(page.get_by_text("Worst questions"))
    expect_visible(page.get_by_test_id("stExpander").filter(has_text="q-0001"))
    page.get_by_test_id("stExpander").filter(has_text="q-0001").first.click()
    wait_ready(page)
    screenshot(page, "evaluate")

    # A second config (BM25), then the comparison.
    choose(page, "Retrieval mode", "bm25")
    page.get_by_role("button", name="Run evaluation").click()
    expect_visible(page.get_by_text(re.compile(r"Run #2 saved")))
    sidebar_go(page, "Compare runs")
    expect_visible(page.locator(".st-key-comparison [data-testid=stDataFrame]"))
    expect_visible(page.get_by_text(re.compile(r"Config changes A → B: mode")))
    wait_ready(page)
    screenshot(page, "compare")

    sidebar_go(page, "Corpus")
    expect_visible(page.get_by_test_id("stMetric").filter(has_text="116"))
    screenshot(page, "corpus", readme=True, full_page=False)

    assert dialogs == []
    print(f"journey took {time.monotonic() - t0:.1f}s")


def test_browser_document_html_is_inert(app, page):
    """it-security-007 holds literal <script> and <img src=x onerror=alert(1)>: shown as text, never run."""
    dialogs, requests = [], []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(app.url + "/?annotator=xss")
    wait_ready(page, timeout=FIRST_START_MS)
    expect_visible(page.get_by_role("button", name="New question"), FIRST_START_MS)
    add_question(page, "What should I do with an email that has a script tag or onerror markup?", "how-to")

    # As a candidate card or a keyword hit: title, highlighted snippet and full text.
    search = page.get_by_role("textbox", name="Search the corpus by keyword or document id")
    search.fill("it-security-007")
    search.press("Enter")
    target = page.locator("[class*='st-key-cand-'], [class*='st-key-hit-']").filter(has_text="it-security-007").first
    expect_visible(target)
    target.locator("details summary").first.click()  # the full text, inside the card's one markdown element
    expect_visible(target.get_by_text("<img src=x onerror=alert(1)>", exact=False))
    body = target.inner_text()
    assert "<script>" in body and "<img src=x onerror=alert(1)>" in body

    screenshot(page, "xss-label")

    # The Corpus page's document browser shows it as text too.
    sidebar_go(page, "Corpus")
    browse = page.get_by_role("textbox", name="Search by keyword or document id")
    browse.fill("it-security-007")
    browse.press("Enter")
    wait_ready(page)
    choose(page, "Read a document", "it-security-007")
    shown = page.locator(".st-key-browse-doc")
    expect_visible(shown.get_by_text("<img src=x onerror=alert(1)>", exact=False))
    page.wait_for_timeout(1500)  # let any injected handler fire if escaping failed
    screenshot(page, "xss-corpus")

    assert page.locator("img[src='x']").count() == 0
    assert page.locator("script:text('onerror')").count() == 0
    assert dialogs == []
    assert not [u for u in requests if re.search(r"/x(\?|$)", u)], requests


def empty_collection(app) -> str:
    """An empty collection on the module's server, where the demo golden set is offered: the default one
    on a first start (what a new user sees, and what the README shots show), else a new one."""
    with open_store(app.home / "labeler.db") as store:
        if store.collections.get(DEFAULT_COLLECTION) is None or not store.questions.list():
            return DEFAULT_COLLECTION
        return store.collections.ensure(f"empty-{len(store.collections.list())}").name


def latest_run_id(app) -> int:
    """The newest saved run's id in any collection (0 before the first): runs are numbered across collections."""
    return rows(app.home / "labeler.db", "SELECT coalesce(max(id), 0) FROM runs")[0][0]


def test_browser_demo_golden_set_keyboard_and_readme_screenshots(app, browser):
    """An empty collection offers the demo golden set; with it loaded, keyboard grading works and the
    Golden set / Evaluate / compare pages are captured for the README. On the module's server (its
    model and index loaded by the tests before, when they ran): no second start."""
    collection = empty_collection(app)
    context = browser.new_context(viewport={"width": 1360, "height": 900}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(STEP_MS)
    try:
        page.goto(app.url + "/?annotator=marco" + ("" if collection == DEFAULT_COLLECTION else f"&set={collection}"))
        wait_ready(page, timeout=FIRST_START_MS)
        page.get_by_role("button", name="Load the demo golden set").click()
        expect_visible(page.get_by_text(re.compile("Opened the demo golden set in its own collection")))
        expect_visible(page.get_by_role("heading", name="How many vacation days do I get?"))

        # Keyboard: J moves the focus to candidate 2, then 2 grades it "Relevant".
        page.get_by_role("heading", level=1).first.click()
        page.keyboard.press("j")
        expect_visible(card(page, "cand-1").get_by_text("▶", exact=False))
        page.keyboard.press("2")
        expect_visible(card(page, "cand-1").get_by_role("radio", name="2 · Relevant").and_(
            page.locator("[aria-checked=true]")))
        # Typing a digit into a text field types it; it does not grade.
        open_new_question_form(page)
        page.get_by_role("textbox", name="Question", exact=True).fill("")
        page.get_by_role("textbox", name="Question", exact=True).press("3")
        assert page.get_by_role("textbox", name="Question", exact=True).input_value() == "3"
        page.wait_for_timeout(500)
        assert card(page, "cand-2").locator("button[role=radio][aria-checked=true]").count() == 0
        page.get_by_role("textbox", name="Question", exact=True).fill("")
        page.get_by_role("heading", level=1).first.click()  # a click outside closes the popover
        expect(page.get_by_role("textbox", name="Question", exact=True)).to_be_hidden()
        scroll_to_top(page)
        screenshot(page, "label-demo", full_page=False, height=1300)  # README's label.png: test_browser_label_keys

        sidebar_go(page, "Golden set")
        expect_visible(page.get_by_test_id("stMetric").filter(has_text="62"))
        screenshot(page, "golden-set", readme=True, full_page=False)

        sidebar_go(page, "Evaluate")
        first = latest_run_id(app) + 1
        page.get_by_role("button", name="Run evaluation").click()
        expect_visible(page.get_by_text(re.compile(f"Run #{first} saved")))
        choose(page, "Retrieval mode", "hybrid")
        page.get_by_role("button", name="Run evaluation").click()
        expect_visible(page.get_by_text(re.compile(f"Run #{first + 1} saved")))
        wait_ready(page)
        page.get_by_test_id("stExpander").filter(has_text="first relevant").first.click()
        scroll_to(page.get_by_role("heading", name="Results"))
        screenshot(page, "evaluate", readme=True, full_page=False, height=1700)
        screenshot(page, "evaluate-full")
        sidebar_go(page, "Compare runs")
        expect_visible(page.locator(".st-key-comparison [data-testid=stDataFrame]"))
        screenshot(page, "compare", readme=True, full_page=False, height=1100)
    except BaseException:
        screenshot(page, "FAILED-demo")
        raise
    finally:
        context.close()
