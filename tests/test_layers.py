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


# folder -> the package it installs as (pyproject's package-dir), bottom layer first
PACKAGES = {"labeler": "labeler", "storage": "labeler_storage", "app": "labeler_app",
            "pages": "labeler_pages", "edge": "labeler_edge"}
LAYERS = {  # package -> the project's packages it may import
    "labeler": {"labeler"},
    "labeler_storage": {"labeler", "labeler_storage"},
    "labeler_app": {"labeler", "labeler_storage", "labeler_app"},
    "labeler_pages": {"labeler", "labeler_app", "labeler_pages"},  # the store only through the app layer (app/stores.py)
    # the edge (CLI, HTTP server, Streamlit entry) sits on top: the entry script wires the pages
    "labeler_edge": {"labeler", "labeler_storage", "labeler_app", "labeler_pages", "labeler_edge"},
}
GENERIC = {"storage", "app", "views", "pages", "edge", "cli"}  # names no module of ours may be imported by


def _sources(*folders):
    for folder in folders:
        yield from sorted((REPO / folder).rglob("*.py"))


def test_core_and_storage_never_import_streamlit():
    offenders = [f"{p.relative_to(REPO)} imports {name}" for p in _sources("labeler", "storage", "app")
                 for name in _imports(p) if name.split(".")[0] == "streamlit"]
    assert offenders == []


def test_cli_and_core_import_without_heavy_libraries():
    code = ("import sys, labeler_edge.cli, labeler.corpus, labeler.config, labeler.candidates, labeler.retrieval;"
            "heavy = [m for m in ('torch', 'faiss', 'sentence_transformers', 'bm25s', 'streamlit') if m in sys.modules];"
            "print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == ""


def test_layers_import_only_downwards():
    """No exception: the CLI and the HTTP server are in the edge, above the app layer."""
    offenders = []
    for folder, package in PACKAGES.items():
        for path in _sources(folder):
            rel = path.relative_to(REPO).as_posix()
            offenders += [f"{rel} imports {name}" for name in _imports(path)
                          if name.split(".")[0] in LAYERS and name.split(".")[0] not in LAYERS[package]]
    assert offenders == []



RETRIEVAL_WORK = {"labeler.retrieval", "labeler.judging.features", "labeler.candidates.pool_candidates",
                  "labeler.judging.question_features", "labeler.judging.CorpusText", "labeler_app.systems.pooled_ranking"}


def test_pages_leave_building_retrievers_and_pooling_to_the_app_layer():
    """Use cases live in one layer: a page (its cached loader included) calls labeler_app.pooling to
    build a retriever or pool candidates, and caches what it returns."""
    offenders = []
    for path in _sources("pages"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
                     if isinstance(node, ast.ImportFrom) and node.module else [])
            offenders += [f"{path.relative_to(REPO)} imports {n}" for n in names
                          if any(n == w or n.startswith(w + ".") for w in RETRIEVAL_WORK)]
    assert offenders == []

def test_nothing_imports_a_generic_top_level_name():
    """The installed names are distinctive (labeler_storage, not storage): an import by a folder's
    name would work in a checkout and fail from the wheel."""
    offenders = [f"{p.relative_to(REPO)} imports {name}"
                 for p in _sources(*PACKAGES, "tests", "bench") for name in _imports(p)
                 if name.split(".")[0] in GENERIC]
    assert offenders == []


def test_rooms_stay_small():
    """No source file past 400 lines; no page script past 100 (pages are wiring; `pages/_*.py` are
    the widgets and cached loaders they share)."""
    sizes = {p.relative_to(REPO).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
             for p in _sources(*PACKAGES)}
    too_big = {f: n for f, n in sizes.items() if n > (100 if f.startswith("pages/") and "/_" not in f else 400)}
    assert too_big == {}


def test_no_import_cycles_between_modules():
    modules = {}
    for folder in ("labeler", "storage", "app", "edge"):
        for path in (REPO / folder).rglob("*.py"):
            parts = path.relative_to(REPO).with_suffix("").parts
            name = ".".join((PACKAGES[parts[0]], *parts[1:])).removesuffix(".__init__")
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
    sign-in gate. The page scripts live in the top-level `pages/`; the entry scripts in `edge/`."""
    from labeler_edge.cli.team import ENTRY, TEAM_ENTRY

    for entry in (ENTRY, TEAM_ENTRY):
        assert entry.is_file() and not (entry.parent / "pages").exists()
    assert (REPO / "pages" / "label.py").is_file() and ENTRY.parent != REPO / "pages"


def test_tests_follow_the_house():
    """One folder of tests per layer; at the top only the support modules and this house test."""
    from conftest import LAYERS

    tests = REPO / "tests"
    assert all((tests / layer).is_dir() and list((tests / layer).glob("test_*.py")) for layer in LAYERS)
    assert [p.name for p in tests.glob("test_*.py")] == ["test_layers.py"]
    assert not list(tests.glob("test_app_*.py")) and not list(tests.rglob("test_app_*.py"))
