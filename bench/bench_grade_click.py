"""Grade click latency in Chromium: from the click on a grade button to that button showing as
selected, on the Label page, median and p95 over many clicks.

Baseline, measured in the same run: a click on "Previous"/"Next" question, which reruns the whole
page (what every grade click cost before grading re-rendered only the candidates). Target:
median click -> selected <= 150 ms on the sample corpus and on SciFact (SciFact when its
embeddings are cached under BENCH_HOME, see bench/_common.py).

    .venv/bin/python bench/bench_grade_click.py [--clicks 40] [--corpus sample|scifact|both]
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from _common import BENCH_HOME, DATASETS, REPO, fresh_app_home, percentiles  # noqa: E402
from browser_support import AppServer, wait_ready  # noqa: E402

READY = '[data-testid="stApp"][data-test-script-state="notRunning"]'


def clicks(page, n: int) -> tuple[list[float], list[float]]:
    """(grade click -> selected, full-page rerun click -> idle) latencies in seconds."""
    grade, full = [], []
    for i in range(n):
        card, value = i % 6, (i // 6) % 4  # a new grade each time: every click writes
        button = page.locator(f".st-key-cand-{card}-g{value} button")
        if button.get_attribute("data-testid") == "stBaseButton-primary":
            value = (value + 1) % 4
            button = page.locator(f".st-key-cand-{card}-g{value} button")
        t0 = time.perf_counter()
        button.click()
        page.wait_for_function(
            f"() => document.querySelector('.st-key-cand-{card}-g{value} button')"
            f"?.getAttribute('data-testid') === 'stBaseButton-primary'", polling="raf", timeout=30_000)
        grade.append(time.perf_counter() - t0)
        page.wait_for_selector(READY, timeout=30_000)
    for i in range(max(6, n // 4) // 2 * 2):
        button = page.locator(".st-key-prev-question" if i % 2 == 0 else ".st-key-next-question")
        t0 = time.perf_counter()
        button.click()
        page.wait_for_selector('[data-testid="stApp"][data-test-script-state="running"]', timeout=5_000,
                               state="attached")
        page.wait_for_selector(READY, timeout=60_000)
        full.append(time.perf_counter() - t0)
    return grade, full


def run_case(name: str, home: Path, corpus: Path, n: int, question: str) -> None:
    from playwright.sync_api import sync_playwright

    case = fresh_app_home(home, name, corpus)
    server = AppServer(case, corpus=str(corpus))
    try:
        server.wait_healthy(timeout=120)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium",
                                        args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
            page = browser.new_context(viewport={"width": 1360, "height": 900}).new_page()
            page.goto(server.url + "/?annotator=bench")
            wait_ready(page, timeout=1_200_000)
            for text in ("What is this collection about?", question):  # two: Previous/Next is the baseline
                page.get_by_label("Question", exact=True).fill(text)
                page.get_by_role("button", name="Add question").click()
                page.locator(".st-key-cand-5-g0").wait_for(timeout=600_000)
                wait_ready(page)
            page.get_by_text(question).first.wait_for()
            grade, full = clicks(page, n)
            browser.close()
    finally:
        server.stop()
    g50, g95 = percentiles(grade)
    f50, f95 = percentiles(full)
    print(f"{name:8s} grade click -> selected: median {g50 * 1000:5.0f} ms, p95 {g95 * 1000:5.0f} ms "
          f"(target median <= 150 ms) | whole-page rerun: median {f50 * 1000:5.0f} ms, p95 {f95 * 1000:5.0f} ms "
          f"| ratio {g50 / f50:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clicks", type=int, default=40)
    parser.add_argument("--corpus", choices=("sample", "scifact", "both"), default="both")
    args = parser.parse_args()
    if args.corpus in ("sample", "both"):
        home = BENCH_HOME / "grade-click"
        (home / "cache").mkdir(parents=True, exist_ok=True)
        run_case("sample", home, REPO / "sample_corpus", args.clicks,
                 "How many vacation days do new employees get?")
    if args.corpus in ("scifact", "both"):
        if not any((BENCH_HOME / "cache").glob("emb-*")):
            print(f"scifact: skipped (no SciFact embeddings under {BENCH_HOME / 'cache'}; build them with "
                  f"LABELER_HOME={BENCH_HOME} labeler index {DATASETS / 'scifact'})")
            return
        run_case("scifact", BENCH_HOME, DATASETS / "scifact", args.clicks,
                 "Do statins reduce the risk of dementia?")


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    main()
