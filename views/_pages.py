"""The app's pages, in one list: the entry script navigates between them, and before sign-in the
same URLs are registered as hidden placeholders, so a link to a page (`/golden_set`) shows the
sign-in form and, once signed in, that page — not "Page not found"."""
from __future__ import annotations

from typing import NamedTuple


class PageSpec(NamedTuple):
    script: str
    title: str
    icon: str
    admin_only: bool = False

    @property
    def url_path(self) -> str:
        """What Streamlit makes of the script's name: views/golden_set.py -> golden_set."""
        return self.script.rsplit("/", 1)[-1].removesuffix(".py")


PAGES = (
    PageSpec("views/label.py", "Label", ":material/rule:"),  # the default page
    PageSpec("views/corpus.py", "Corpus", ":material/library_books:"),
    PageSpec("views/golden_set.py", "Golden set", ":material/checklist:"),
    PageSpec("views/evaluate.py", "Evaluate", ":material/query_stats:"),
    PageSpec("views/compare.py", "Compare runs", ":material/compare_arrows:"),
    PageSpec("views/adjudicate.py", "Adjudicate", ":material/gavel:"),
    PageSpec("views/judges.py", "Judges", ":material/smart_toy:"),
    PageSpec("views/team.py", "Team", ":material/group:", admin_only=True),
)
