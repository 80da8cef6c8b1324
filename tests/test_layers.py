"""The layers hold: the core and storage never import streamlit; metrics start without torch."""
from __future__ import annotations

import ast
import subprocess
import sys

from conftest import REPO


def _imports(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module


def test_core_and_storage_never_import_streamlit():
    offenders = [f"{p.relative_to(REPO)} imports {name}"
                 for folder in ("labeler", "storage") for p in (REPO / folder).rglob("*.py")
                 for name in _imports(p) if name.split(".")[0] == "streamlit"]
    assert offenders == []


def test_cli_and_core_import_without_heavy_libraries():
    code = ("import sys, labeler.cli, labeler.corpus, labeler.config, labeler.candidates, labeler.retrieval;"
            "heavy = [m for m in ('torch', 'faiss', 'sentence_transformers', 'bm25s', 'streamlit') if m in sys.modules];"
            "print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == ""
