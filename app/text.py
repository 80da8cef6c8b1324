"""Showing document text safely: snippets around query terms, and inert highlighted markup.

Every string from a file, a user or a server (ids, titles, texts, names, messages) is data, never
markup. Anything the app renders as Markdown (`st.markdown`, captions, alerts, headings, labels)
takes data only through `inert` (prose) or `inert_code` (an id in code font); `highlight_markup`
splits the raw text on the query terms, escapes every piece and only then wraps the matched pieces
in `<mark>`. So a value holding `<script>`, `<![CDATA[...]]>`, `![x](http://...)`, `[x](javascript:...)`,
`$math$`, `:red[...]` or `:smile:` renders as the literal characters it contains.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from labeler.status import Status

# Characters HTML, Markdown (GFM autolinks of `www.`, `x@y.z` and `http://` included), Streamlit's
# directives (`:red[x]`, `:material/...:`, `:smile:`) or KaTeX (`$`) would interpret; written as
# numeric references they display as themselves, and CommonMark never reads a reference as syntax.
_MARKDOWN_SPECIAL = "\\`*_{}[]()#+-.!|~$:<>&\"'=/@^%"
_ENTITY = {c: f"&#{ord(c)};" for c in _MARKDOWN_SPECIAL}
_LINE_START_ONLY = "-+#"
_AUTOLINK = re.compile(r"(https?(?=://)|www(?=\.)|@)", re.IGNORECASE)
_WS = re.compile(r"\s+")


def inert(text: str) -> str:
    """`text` as Markdown/HTML that displays exactly these characters (newlines become spaces).

    `-`, `+` and `#` are syntax only where a line starts (a list item, a rule, a heading), and with
    newlines gone that can only be the text's first character after spaces: elsewhere they stay as
    they are, so plain ids and labels (`q-0001`, `dense #1`) read the same in the Markdown source.
    GitHub's autolinks (`http://…`, `www.…`, `name@host.org`) are also found in the decoded text, where
    no reference helps: an invisible word joiner after `http`, `www` and `@` keeps them from matching.
    """
    flat = _AUTOLINK.sub("\\1\u2060", _WS.sub(" ", text))
    lead = len(flat) - len(flat.lstrip(" "))
    return "".join(c if c in _LINE_START_ONLY and i > lead else _ENTITY.get(c, c) for i, c in enumerate(flat))


def inert_code(text: str) -> str:
    """`text` as a Markdown code span (code font) that displays exactly these characters.

    Inside a code span nothing is markup, not even a character reference, so the text goes in raw;
    the fence is one backtick longer than the longest run of backticks in it, so no backtick in the
    text can close the span (the way an id holding a backtick once escaped into live HTML).
    """
    flat = _WS.sub(" ", text)
    fence = "`" * (max((len(run) for run in re.findall(r"`+", flat)), default=0) + 1)
    # A space on each side when the text starts or ends with a backtick (or a space, which CommonMark
    # would strip): CommonMark strips exactly one space from each side again.
    pad = " " if flat[:1] in ("`", " ") or flat[-1:] in ("`", " ") else ""
    return f"{fence}{pad}{flat}{pad}{fence}" if flat else inert("")


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


__all__ = ["highlight_markup", "inert", "inert_code", "snippet"]


def counted(count: int, word: str) -> str:
    """'1 grade', '2 grades': a count with its noun (a regular plural)."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def status_reason(status: Status, consensus_grades: Mapping[str, int], *, n_annotators: int,
                  candidates: tuple[str, ...] = ()) -> str:
    """Why the question has `status`, e.g. "done: 2 relevant documents (consensus grade ≥ 1) by 1
    annotator; 4 of 16 candidates unjudged". `candidates`: the doc ids on screen, to count those
    nobody has judged."""
    n_relevant = sum(1 for g in consensus_grades.values() if g >= 1)
    unjudged = sum(1 for d in candidates if d not in consensus_grades)
    tail = f"; {unjudged} of {counted(len(candidates), 'candidate')} unjudged" if unjudged else ""
    by = f" by {counted(n_annotators, 'annotator')}" if n_annotators else ""
    if status == Status.UNANSWERABLE:
        return "unanswerable: voted so, and no document has consensus grade ≥ 1"
    if status == Status.DONE:
        return f"done: {counted(n_relevant, 'relevant document')} (consensus grade ≥ 1){by}{tail}"
    if status == Status.STARTED:
        return f"started: {counted(len(consensus_grades), 'document')} judged{by}, none relevant yet{tail}"
    return "new: nothing judged yet"
