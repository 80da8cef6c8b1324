"""The app installs like a Python tool: the built wheel, in a new virtual environment, runs
`labeler app` and `labeler score` from a folder outside the checkout.

The new environment reuses the dependencies already installed in this one (a `.pth` line to its
site-packages), so nothing is downloaded: the wheel is installed with `--no-deps --no-index`.
"""
from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import time
import tomllib
import zipfile
from pathlib import Path

import httpx
import pytest

from browser_support import free_port
from conftest import REPO, SAMPLE
from streamlit_client import StreamlitSession

DISTINCTIVE = {"labeler", "labeler_storage", "labeler_app", "labeler_pages", "labeler_edge"}


def _package_folders() -> set[str]:
    """Every folder of the checkout that holds Python modules, named as pyproject installs it."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    folder_of = {folder: package for package, folder in config["package-dir"].items()}
    names = set()
    for folder in ("labeler", *folder_of):
        base = folder_of.get(folder, folder)
        for init in (REPO / folder).rglob("*.py"):
            rel = init.parent.relative_to(REPO / folder)
            if "__pycache__" not in rel.parts:
                names.add(".".join((base, *rel.parts)))
    return names


def test_install_lists_every_package_folder():
    packages = set(tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    assert _package_folders() - packages == set()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    source = out / "source"  # a copy: building writes build/ and *.egg-info beside the sources
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", ".labeler", "test-artifacts", "build", "*.egg-info", "__pycache__", "tests", "bench", "docs"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                    "-q", "-w", str(out), str(source)], check=True, capture_output=True, timeout=300)
    return next(out.glob("golden_set_labeler-*.whl"))


def test_wheel_installs_only_distinctive_names_and_carries_the_app(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/", 1)[0] for n in names if not n.split("/", 1)[0].endswith(".dist-info")}
    assert top == DISTINCTIVE
    for needed in ("labeler_edge/streamlit_app.py", "labeler_edge/team_app.py", "labeler_pages/label.py",
                   "labeler/sample_corpus/corpus.jsonl", "labeler/sample_corpus/golden.jsonl",
                   "labeler_storage/alembic/versions/0001_base_tables.py"):
        assert needed in names, needed
    assert not any(n.startswith("labeler_edge/pages/") for n in names)  # no pages/ beside the entry


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """A new venv holding the wheel; its dependencies come from this environment's site-packages."""
    root = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(root / "bin" / "python"), "install", "--no-deps",
                    "--no-index", "--no-compile", "-q", str(wheel)], check=True, timeout=300, capture_output=True)
    # Only now, so pip never saw (nor uninstalled) this environment's editable install of the checkout.
    purelib = next((root / "lib").glob("python3*")) / "site-packages"
    (purelib / "reuse-deps.pth").write_text("".join(f"{p}\n" for p in site.getsitepackages()), encoding="utf-8")
    return root


def _outside_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LABELER_CORPUS", "LABELER_DB_URL")}
    return {**env, "LABELER_HOME": str(tmp_path / "home"), "HF_HUB_OFFLINE": "1"}


def test_installed_wheel_imports_from_its_own_site_packages(venv, tmp_path):
    code = "import labeler, labeler_edge, labeler_pages; print(labeler.__file__); print(labeler_pages.__file__)"
    out = subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True, cwd=tmp_path,
                         env=_outside_env(tmp_path), check=True, timeout=120).stdout.split()
    assert all(str(venv) in line and str(REPO) not in line for line in out)


def test_installed_labeler_scores_outside_the_checkout(venv, tmp_path):
    golden = tmp_path / "golden.jsonl"
    golden.write_bytes((SAMPLE / "golden.jsonl").read_bytes())
    run = tmp_path / "run.trec"
    run.write_text("q-0001 Q0 leave-001 1 2.0 mine\nq-0001 Q0 leave-002 2 1.0 mine\n", encoding="utf-8")
    done = subprocess.run([str(venv / "bin" / "labeler"), "score", str(golden), str(run)], capture_output=True,
                          text=True, cwd=tmp_path, env=_outside_env(tmp_path), timeout=300)
    assert done.returncode == 0, done.stderr
    assert "ndcg@10" in done.stdout.lower()


def test_installed_labeler_app_serves_the_sample_corpus_outside_the_checkout(venv, tmp_path):
    port = free_port()
    proc = subprocess.Popen([str(venv / "bin" / "labeler"), "app", "--port", str(port)], cwd=tmp_path,
                            env=_outside_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.stdout.read().decode(errors="replace")
            try:
                if httpx.get(url + "/_stcore/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        session = StreamlitSession(url, timeout=300)
        try:
            texts = "\n".join(session.last.texts)
        finally:
            session.close()
        assert "Traceback" not in texts and "Error" not in texts
        assert "sample" in texts.lower() or "handbook" in texts.lower(), texts[:2000]
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(timeout=30)
