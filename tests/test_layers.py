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


LAYERS = {  # folder -> top-level packages it may import from this project
    "labeler": {"labeler"},
    "storage": {"labeler", "storage"},
    "app": {"labeler", "storage", "app"},
    "views": {"labeler", "storage", "app", "views"},
}
PROJECT = {"labeler", "storage", "app", "views"}


def test_layers_import_only_downwards():
    # labeler.cli sits at the top of the core: it may open a store (import/export) but never the app layer.
    allowed = {**LAYERS, "labeler/cli": {"labeler", "storage"}}
    offenders = []
    for folder in LAYERS:
        for path in (REPO / folder).rglob("*.py"):
            rel = path.relative_to(REPO).as_posix()
            may = allowed["labeler/cli"] if rel.startswith("labeler/cli/") else allowed[folder]
            offenders += [f"{rel} imports {name}" for name in _imports(path)
                          if name.split(".")[0] in PROJECT and name.split(".")[0] not in may]
    assert offenders == []


def test_app_layer_never_imports_streamlit():
    offenders = [f"{p.relative_to(REPO)} imports {name}" for p in (REPO / "app").rglob("*.py")
                 for name in _imports(p) if name.split(".")[0] == "streamlit"]
    assert offenders == []


def test_rooms_stay_small():
    """No source file past ~450 lines; no page script past ~120 (pages are wiring; `views/_*.py` are
    the widgets and cached loaders they share)."""
    sizes = {p.relative_to(REPO).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
             for folder in ("labeler", "storage", "app", "views") for p in (REPO / folder).rglob("*.py")}
    too_big = {f: n for f, n in sizes.items() if n > (120 if f.startswith("views/") and "/_" not in f else 450)}
    assert too_big == {}


def test_no_import_cycles_between_modules():
    modules = {}
    for folder in ("labeler", "storage", "app"):
        for path in (REPO / folder).rglob("*.py"):
            name = ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
            modules[name] = path
    # Only imports executed at module load make a cycle; imports inside functions are deferred.
    graph = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        deps = set()
        for node in tree.body:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            for sub in ast.walk(node) if isinstance(node, (ast.Import, ast.ImportFrom, ast.Try, ast.If)) else ():
                targets = ([a.name for a in sub.names] if isinstance(sub, ast.Import)
                           else [f"{sub.module}.{a.name}" for a in sub.names]
                           if isinstance(sub, ast.ImportFrom) and sub.module else [])
                for target in targets:
                    while target and target not in modules:
                        target = target.rpartition(".")[0]
                    if target and target != name and not name.startswith(target + "."):
                        deps.add(target)
        graph[name] = deps
    seen, on_stack, cycles = set(), [], []

    def visit(node):
        if node in on_stack:
            cycles.append(on_stack[on_stack.index(node):] + [node])
            return
        if node in seen:
            return
        seen.add(node)
        on_stack.append(node)
        for dep in sorted(graph.get(node, ())):
            visit(dep)
        on_stack.pop()

    for node in sorted(graph):
        visit(node)
    assert cycles == []


def test_no_pages_folder_beside_the_entry_script():
    """Streamlit treats a `pages/` folder beside the entry script as v1 multipage pages and runs a
    page's file *instead of* the entry script when its URL is opened: `/corpus` would skip the
    sign-in gate. The page scripts live in `views/` for that reason."""
    assert not (REPO / "pages").exists()
