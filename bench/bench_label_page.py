"""Benchmark: rerun time of the Label page after a grade click, SciFact (5,183 docs) vs the sample
corpus (116 docs), in one process, printed as a ratio (target <= 1.5x).

Each corpus gets its own database under the bench data directory; the embedding cache is shared
(`<home>/cache`), so only the very first run embeds SciFact (~6 min on 2 cores); later runs load it.
Timing is AppTest's `click().run()`: the whole script rerun the click triggers, database write
included, browser rendering excluded.

    .venv/bin/python bench/bench_label_page.py [--home DIR (default $BENCH_HOME)] [--clicks 20]
"""
from __future__ import annotations

import argparse
import html
import statistics
import sys
import time
from pathlib import Path

from _common import BENCH_HOME, DATASETS, REPO, fresh_app_home, grade_control, prepare_scifact_home

SCIFACT = DATASETS / "scifact"
CASES = [
    ("sample (116 docs)", REPO / "sample_corpus", "How many vacation days do new employees get?"),
    ("SciFact (5,183 docs)", SCIFACT, "Vitamin D supplementation reduces the risk of bone fractures in older adults"),
]


def time_label_page(home: Path, corpus: Path, question: str, clicks: int) -> dict[str, float]:
    """Open the Label page on `corpus`, add `question`, then time `clicks` grade clicks."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from labeler_pages._cards import new_question_keys

    fresh_app_home(home, corpus.name, corpus)
    st.cache_resource.clear()

    t0 = time.perf_counter()
    at = AppTest.from_file(str(REPO / "edge" / "streamlit_app.py"), default_timeout=1800)
    at.run()
    at.sidebar.text_input(key="annotator").input("bench").run()
    keys = new_question_keys(at.session_state)
    at.text_input(key=keys.text).input(question)
    at.button(key=keys.submit).click().run()
    assert not at.exception, at.exception
    opened = time.perf_counter() - t0
    first_doc = next(m.value for m in at.markdown if "<small><code>" in m.value).split("<small><code>")[1]
    n_candidates = sum(1 for g in at.segmented_control if (g.key or "").startswith("grade-"))  # one per card

    grade_control(at, "cand-0").set_value(1).run()  # warm: first click after opening
    times = []
    for i in range(clicks):
        control = grade_control(at, f"cand-{i % n_candidates}")
        grade = (i // n_candidates + i) % 4
        t = time.perf_counter()
        control.set_value(None if control.value == grade else grade).run()
        times.append(time.perf_counter() - t)
        assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    return {"median": statistics.median(times), "p90": sorted(times)[int(0.9 * (len(times) - 1))],
            "open": opened, "candidates": n_candidates, "first": html.unescape(first_doc.split("</code>")[0])}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=BENCH_HOME)
    parser.add_argument("--clicks", type=int, default=20)
    args = parser.parse_args()
    if not prepare_scifact_home(args.home):
        return 2
    sys.path.insert(0, str(REPO))

    results = {}
    for name, corpus, question in CASES:
        print(f"{name}: opening (SciFact embeds once, ~6 min, when {args.home / 'cache'} lacks it)…", flush=True)
        results[name] = r = time_label_page(args.home, corpus, question, args.clicks)
        print(f"  opened in {r['open']:.1f}s · {r['candidates']} candidates (first {r['first']}) · rerun after a grade click: "
              f"median {r['median'] * 1000:.0f} ms, p90 {r['p90'] * 1000:.0f} ms ({args.clicks} clicks)", flush=True)
    base, big = (results[name]["median"] for name, _, _ in CASES)
    ratio = big / base
    print(f"Label page rerun after a grade click: SciFact / sample = {big * 1000:.0f} ms / {base * 1000:.0f} ms "
          f"= {ratio:.2f}x (target <= 1.5x: {'met' if ratio <= 1.5 else 'MISSED'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
