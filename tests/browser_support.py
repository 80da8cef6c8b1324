"""Running the app for a browser test: a Streamlit subprocess on a free port against a temporary
data directory, Debian's chromium through pytest-playwright, readiness waits and screenshots.

Follows ../shared/TESTING.md: never `playwright install`; the browser is /usr/bin/chromium; the
app runs in its own process group and is stopped with SIGTERM to that group.
"""
from __future__ import annotations

import html
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]
ARTIFACTS = REPO / "test-artifacts"
README_SHOTS = REPO / "docs" / "screenshots"
READY = ('[data-testid="stApp"][data-test-connection-state="CONNECTED"]'
         '[data-test-script-state="notRunning"]')


def require_chromium() -> None:
    """Skip on a laptop without chromium; in CI a missing browser is a failure, not a skip."""
    if CHROMIUM.exists():
        return
    message = f"{CHROMIUM} is missing (apt-get install -y chromium; never `playwright install`)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class AppServer:
    """`streamlit run local_app.py` (or `script`: team_app.py, the team server) as `labeler app` starts
    it (edge/_serve.py), in its own process group, against `home` as LABELER_HOME."""

    def __init__(self, home: Path, *, corpus: str | None = None, log: Path | None = None,
                 port: int | None = None, script: str = "local_app.py") -> None:
        self.home = home
        self.port = port or free_port()  # a port given: a restart, where the open tabs reconnect
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log or home / "streamlit.log"
        env = {**os.environ, "LABELER_HOME": str(home)}
        env.pop("LABELER_CORPUS", None)
        if corpus:
            env["LABELER_CORPUS"] = corpus
        home.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "a")  # a restart's log follows the first run's
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "labeler_edge._serve", "run", str(REPO / "edge" / script), "--server.headless", "true",
             "--server.port", str(self.port), "--server.address", "127.0.0.1",
             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
            cwd=REPO, env=env, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)

    def wait_healthy(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with {self.proc.returncode}:\n{self.log()}")
            try:
                with urllib.request.urlopen(self.url + "/_stcore/health", timeout=2) as r:
                    if r.read().decode().strip() == "ok":
                        return
            except OSError:
                pass
            time.sleep(0.3)
        raise TimeoutError(f"streamlit not healthy after {timeout}s:\n{self.log()}")

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")[-4000:]

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """End the server with `sig` (SIGKILL: a crash, nothing flushed; SIGTERM falls back to it after 15 s)."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, sig)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self._log.close()


def launch_chromium(playwright):
    """Debian's chromium with the flags this machine needs."""
    require_chromium()
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)


@pytest.fixture(scope="module")
def browser(playwright):
    """One chromium for a module that imports this fixture (its launch is paid once); each test opens
    contexts of its own (own cookies, own app session) and closes them."""
    b = launch_chromium(playwright)
    yield b
    b.close()


# Idle, and no input since the last run began (or the input started none within QUIET_MS): right after
# a click the page is still "notRunning" until the server's rerun begins, so waiting for the idle
# state alone could return before the click's rerun, and a test then read (or clicked) a page, or a
# database, the click had not changed yet. The tracker is installed in the page on first use.
QUIET_MS = 1500
_IDLE_SINCE_INPUT = """(quiet) => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app) return false;
  const w = window;
  if (!w.__gtIdle) {
    const t = w.__gtIdle = {input: -1, run: 0};
    for (const type of ['pointerdown', 'keydown', 'input', 'change'])
      document.addEventListener(type, () => { t.input = performance.now(); }, true);
    new MutationObserver(() => {
      if (app.getAttribute('data-test-script-state') === 'running') t.run = performance.now();
    }).observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
  }
  const t = w.__gtIdle;
  // A Label page is ready once its key queue listens (pages/_keyboard.py marks the body): before, a
  // key pressed in a text box (Escape) or on the page ran no code of ours.
  const keys = !document.querySelector('.st-key-keyboard-bar') || document.body.classList.contains('labeler-keys');
  return keys && app.getAttribute('data-test-connection-state') === 'CONNECTED'
    && app.getAttribute('data-test-script-state') === 'notRunning'
    && (t.run >= t.input || performance.now() - t.input > quiet);
}"""


def wait_ready(page, timeout: float = 120_000) -> None:
    """Wait until the app is connected, no script is running, and the last click or key (if any)
    has had its rerun (see _IDLE_SINCE_INPUT)."""
    page.wait_for_selector(READY, timeout=timeout)
    page.wait_for_function(_IDLE_SINCE_INPUT, arg=QUIET_MS, timeout=timeout)


def wait_until(check, what: str, timeout: float = 30) -> None:
    """Poll `check` (e.g. a database read) until it holds. A grade control shows its selection in the
    browser at once, before the server's rerun has saved it; wait_ready alone can pass before the
    rerun starts."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def screenshot(page, name: str, *, readme: bool = False, full_page: bool = True, height: int | None = None) -> Path:
    """Save a screenshot into test-artifacts/ (git-ignored); with UPDATE_README_SCREENSHOTS=1, README copies too.

    Streamlit scrolls inside its main block, not the document, so a full-page shot grows the
    viewport to the main block's height (capped) for the moment of the shot. `height` sets the
    viewport height for the shot instead.
    """
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    before = page.viewport_size
    if full_page and height is None:
        height = page.evaluate("() => (document.querySelector('[data-testid=stMain]') || document.body).scrollHeight")
        height = min(max(int(height) + 40, before["height"]), 8000)
    if height and height != before["height"]:
        page.set_viewport_size({"width": before["width"], "height": height})
        page.wait_for_timeout(600)  # charts and the data grid re-lay out
    try:
        page.screenshot(path=str(path))
    finally:
        if page.viewport_size != before:
            page.set_viewport_size(before)
    # README copies are refreshed on request only, so `make test` leaves the tree clean.
    if readme and os.environ.get("UPDATE_README_SCREENSHOTS"):
        shrink_for_readme(path, README_SHOTS / f"{name}.png")
    return path


def shrink_for_readme(source: Path, target: Path, *, max_height: int = 1800) -> None:
    """A committed copy kept small: cropped to `max_height` px and quantized to a 96-colour palette."""
    from PIL import Image

    target.parent.mkdir(parents=True, exist_ok=True)
    with Image.open(source) as img:
        img = img.convert("RGB")
        if img.height > max_height:
            img = img.crop((0, 0, img.width, max_height))
        img.quantize(colors=96, method=Image.Quantize.MEDIANCUT).save(target, optimize=True)


# --------------------------------------------------------------------------- AppTest support
# (kept here with the browser helpers: both start the real app against a temporary data directory)

APP = REPO / "edge" / "streamlit_app.py"


_built: dict[str, Path] = {}


@pytest.fixture(scope="session")
def sample_embeddings(tmp_path_factory) -> Path:
    """The sample corpus's embedding + index cache, built once per test session with the real model.

    Each test module imports this fixture, which registers it once per module; the memo makes
    the build happen once per session all the same.
    """
    from labeler.config import RunConfig
    from labeler.paths import SAMPLE_CORPUS
    from labeler.retrieval import open_retriever

    if "sample" not in _built or not _built["sample"].is_dir():
        root = tmp_path_factory.mktemp("sample-cache") / "cache"
        root.mkdir()
        retriever = open_retriever(SAMPLE_CORPUS, RunConfig(), cache_root=root)
        retriever.bm25  # noqa: B018 - build the BM25 cache too
        _built["sample"] = root
    return _built["sample"]


@pytest.fixture
def app_home(sample_embeddings, monkeypatch) -> Path:
    """$LABELER_HOME (the per-test directory conftest sets) with the sample embeddings copied in."""
    import streamlit as st

    home = Path(os.environ["LABELER_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    import shutil

    shutil.copytree(sample_embeddings, home / "cache", dirs_exist_ok=True)
    monkeypatch.delenv("LABELER_CORPUS", raising=False)
    st.cache_resource.clear()  # process-wide: never let one test's store or corpus leak into another
    st.cache_data.clear()
    yield home
    st.cache_resource.clear()
    st.cache_data.clear()


def open_app(page: str | None = None, *, annotator: str | None = None):
    """Run the app once (Label is the default page), optionally as `annotator` and on `page`."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=120)
    if annotator:
        at.session_state["annotator"] = annotator
    at.run()
    assert not at.exception, at.exception
    if page:
        at.switch_page(page).run()
        assert not at.exception, at.exception
    return at


def submit_question(at, text: str | None = None, query_type: str | None = None):
    """AppTest: type `text` (and pick `query_type`) in the new-question form drawn now and press Add question
    (with no text: press it on the empty form); returns `at`, run."""
    from labeler_pages._cards import new_question_keys

    keys = new_question_keys(at.session_state)
    if text is not None:
        at.text_input(key=keys.text).input(text)
    if query_type is not None:
        at.selectbox(key=keys.query_type).set_value(query_type)
    return at.button(key=keys.submit).click().run()


def grade_control(at, key: str):
    """AppTest: the grade control of card `key` ("cand-0", "hit-2"); its own key names the question and
    document it grades (pages/_cards.py grade_widget), so it is found inside the card's container."""
    cards = [b for b in at.container if b._block_id.endswith(f"-{key}")]  # a keyed container: $$ID-<hash>-<key>
    assert len(cards) == 1, f"{len(cards)} cards {key}"
    return cards[0].segmented_control[0]


def unanswerable_button(at):
    """AppTest: the question's Mark/Unmark unanswerable button (its key names the question: pages/_cards.py
    question_widget)."""
    found = [b for b in at.button if (b.key or "").startswith("unanswerable")]
    assert len(found) == 1, f"{len(found)} unanswerable buttons"
    return found[0]


def grade_card(at, n: int, grade: int | None):
    """AppTest: click grade `grade` on candidate card n (0-based) — None clicks the selected grade again,
    which clears it — and run the page; returns `at`."""
    return grade_control(at, f"cand-{n}").set_value(grade).run()


def card_grade(at, n: int) -> int | None:
    """AppTest: the grade candidate card n (0-based) shows as selected."""
    return grade_control(at, f"cand-{n}").value


def card_grades_offered(at, n: int) -> list[str]:
    """AppTest: the grades card n offers (only "0 · …" while you mark the question unanswerable)."""
    return grade_control(at, f"cand-{n}").options


def grade_option(scope, n: int, grade: int):
    """Browser: the button of grade `grade` on candidate card n (0-based) in `scope` (a page or a locator);
    selected means `aria-checked="true"`."""
    return scope.locator(f".st-key-cand-{n} [class*='st-key-grade-'] button[role=radio]").filter(has_text=f"{grade} · ")


def texts(elements) -> list[str]:
    """What each element says: its Markdown source with the character references (and the invisible word
    joiners) that `inert` writes data with read back (the source itself is `e.value`)."""
    return [html.unescape(e.value).replace("\u2060", "") for e in elements]
