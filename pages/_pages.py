"""The app's pages, in one list: the entry script navigates between them, and before sign-in the
same URLs are registered as hidden placeholders, so a link to a page (`/golden_set`) shows the
sign-in form and, once signed in, that page — not "Page not found"."""
from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

HERE = Path(__file__).resolve().parent  # the page scripts sit beside this file; the entry script does not


def page_path(name: str) -> str:
    """The absolute path of page script `name` ("label"), for st.Page and st.page_link: the entry
    script is in the edge, not beside this folder, so a relative path would not find it."""
    return str(HERE / f"{name}.py")


class PageSpec(NamedTuple):
    script: str
    title: str
    icon: str
    admin_only: bool = False

    @property
    def url_path(self) -> str:
        """What Streamlit makes of the script's name: pages/golden_set.py -> golden_set."""
        return self.script.rsplit("/", 1)[-1].removesuffix(".py")


PAGES = (
    PageSpec(page_path("label"), "Label", ":material/rule:"),  # the default page
    PageSpec(page_path("corpus"), "Corpus", ":material/library_books:"),
    PageSpec(page_path("golden_set"), "Golden set", ":material/checklist:"),
    PageSpec(page_path("evaluate"), "Evaluate", ":material/query_stats:"),
    PageSpec(page_path("compare"), "Compare runs", ":material/compare_arrows:"),
    PageSpec(page_path("adjudicate"), "Adjudicate", ":material/gavel:"),
    PageSpec(page_path("judges"), "Judges", ":material/smart_toy:"),
    PageSpec(page_path("team"), "Team", ":material/group:", admin_only=True),
)
