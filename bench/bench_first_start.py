"""First start: how long after the app answers until the first question's candidates show.

A fresh data directory holds the sample corpus's demo golden set (imported with the CLI, which
embeds nothing), so nothing is cached: no embeddings, no FAISS or BM25 index. `labeler app`
starts as a user starts it; a browser session (Streamlit's own websocket protocol, the same
messages Chromium sends: tests/streamlit_client.py) opens the Label page and reruns it until the
first card shows a retriever badge ("BM25 #" or "dense #"). Printed: seconds from launch to the
server answering /_stcore/health, and from that answer to candidates on the page (target: <= 10 s,
the page offering BM25 candidates while the dense index builds), each run `--runs` times.

Baseline, measured in the same run: the same server process starting a one-line Streamlit
script (what any Streamlit app pays before its own work), launch to its first page run.

    .venv/bin/python bench/bench_first_start.py [--runs 3]
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from _common import REPO  # noqa: E402
from browser_support import free_port  # noqa: E402
from streamlit_client import StreamlitSession  # noqa: E402

LABELER = Path(sys.executable).with_name("labeler")
BADGES = ("BM25 #", "dense #")


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("LABELER_CORPUS", "LABELER_DB_URL")}
    return {**env, "LABELER_HOME": str(home), "HF_HUB_OFFLINE": "1"}


def _wait_health(url: str, proc: subprocess.Popen, timeout: float = 300) -> float:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}")
        try:
            if httpx.get(url + "/_stcore/health", timeout=2).status_code == 200:
                return time.monotonic()
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    raise TimeoutError("the server never answered")


def _stop(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=60)


def first_start(work: Path) -> tuple[float, float]:
    """(launch -> health, health -> candidates shown) for one cold start."""
    home = work / "home"
    shutil.rmtree(home, ignore_errors=True)
    subprocess.run([str(LABELER), "import", str(REPO / "sample_corpus" / "golden.jsonl")], env=_env(home),
                   cwd=work, check=True, capture_output=True, timeout=300)
    port = free_port()
    launched = time.monotonic()
    proc = subprocess.Popen([str(LABELER), "app", "--port", str(port)], env=_env(home), cwd=work,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}"
        answered = _wait_health(url, proc)
        session = StreamlitSession(url, timeout=300, query="annotator=bench")
        try:
            while not any(b in text for text in session.last.texts for b in BADGES):
                if time.monotonic() - answered > 300:
                    raise TimeoutError("no candidates after 300 s")
                time.sleep(0.2)
                session.rerun()
            shown = time.monotonic()
        finally:
            session.close()
        return answered - launched, shown - answered
    finally:
        _stop(proc)


def bare_streamlit(work: Path) -> float:
    """Launch -> first page run of a one-line Streamlit script on the same runner."""
    script = work / "hello.py"
    script.write_text("import streamlit as st\nst.markdown('hello')\n", encoding="utf-8")
    port = free_port()
    launched = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "labeler_edge._serve", "run", str(script), "--server.port",
                             str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false"],
                            env=_env(work / "bare-home"), cwd=work, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_health(url, proc)
        session = StreamlitSession(url, timeout=120)
        session.close()
        return time.monotonic() - launched
    finally:
        _stop(proc)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="first-start-") as tmp:
        work = Path(tmp)
        bare = [bare_streamlit(work) for _ in range(args.runs)]
        starts = [first_start(work) for _ in range(args.runs)]
    to_health = [s[0] for s in starts]
    to_cards = [s[1] for s in starts]
    print(f"bare Streamlit script, launch -> first run: median {statistics.median(bare):.1f} s")
    print(f"labeler app, launch -> answering: median {statistics.median(to_health):.1f} s "
          f"({statistics.median(to_health) / statistics.median(bare):.2f}x the bare script)")
    print(f"labeler app, answering -> first candidates: median {statistics.median(to_cards):.1f} s, "
          f"max {max(to_cards):.1f} s (target <= 10 s)")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
