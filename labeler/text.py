"""Showing document text safely: snippets around query terms, and inert highlighted markup.

Document text is data, never markup. `highlight_markup` splits the raw text on the query
terms, escapes every piece (HTML *and* the Markdown/Streamlit syntax characters, as numeric
character references) and only then wraps the matched pieces in `<mark>`. So a document holding
`<script>`, `<img onerror=...>`, `[x](javascript:...)`, `$math$` or `:red[...]` renders as the
literal characters it contains.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

# Characters Markdown, Streamlit's directives (`:red[x]`, `:material/...:`) or KaTeX (`$`) would
# interpret; written as numeric references they display as themselves.
_MARKDOWN_SPECIAL = "\\`*_{}[]()#+-.!|~$:<>&\"'=/"
_ENTITY = {c: f"&#{ord(c)};" for c in _MARKDOWN_SPECIAL}
_WS = re.compile(r"\s+")


def inert(text: str) -> str:
    """`text` as Markdown/HTML that displays exactly these characters (newlines become spaces)."""
    return "".join(_ENTITY.get(c, c) for c in _WS.sub(" ", text))


def _term_pattern(terms: Iterable[str]) -> re.Pattern[str] | None:
    words = sorted({t for t in terms if t}, key=len, reverse=True)
    if not words:
        return None
    # Whole words only, so "art" does not light up "start"; longest first so "vacation" wins over "vac".
    return re.compile(r"(?<!\w)(" + "|".join(re.escape(w) for w in words) + r")(?!\w)", re.IGNORECASE)


def snippet(text: str, terms: Iterable[str], *, width: int = 280) -> str:
    """About `width` characters of `text` around the first query term (the start if none matches)."""
    flat = _WS.sub(" ", text).strip()
    if len(flat) <= width:
        return flat
    pattern = _term_pattern(terms)
    match = pattern.search(flat) if pattern else None
    start = 0
    if match:
        start = max(0, match.start() - width // 3)
        # Start at a word boundary so the snippet does not open mid-word.
        space = flat.rfind(" ", 0, start + 1)
        start = space + 1 if start and space >= 0 else start
    end = min(len(flat), start + width)
    if end < len(flat):
        space = flat.rfind(" ", start, end)
        end = space if space > start + width // 2 else end
    return ("… " if start else "") + flat[start:end] + (" …" if end < len(flat) else "")


def highlight_markup(text: str, terms: Iterable[str]) -> str:
    """Inert markup of `text` with every whole-word occurrence of a term wrapped in `<mark>`.

    Escaping happens per piece *before* the tags are added, so the only tags in the output
    are the `<mark>` tags this function writes.
    """
    pattern = _term_pattern(terms)
    if pattern is None:
        return inert(text)
    out = []
    pos = 0
    for m in pattern.finditer(text):
        out.append(inert(text[pos:m.start()]))
        out.append("<mark>" + inert(m.group(0)) + "</mark>")
        pos = m.end()
    out.append(inert(text[pos:]))
    return "".join(out)


__all__ = ["highlight_markup", "inert", "snippet"]
