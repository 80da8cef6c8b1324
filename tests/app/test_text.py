"""Document text shown safely: snippets, highlights, and markup that cannot run or format."""
from __future__ import annotations

import html
import re

import pytest
from markdown_it import MarkdownIt  # CommonMark itself (installed with streamlit, through rich)

from labeler_app.label import highlight_terms
from labeler_app.text import highlight_markup, inert, inert_code, snippet

# Values that are markup if any character slips through: raw HTML (a CDATA or processing-instruction
# wrapper re-parsed by the browser as a comment before a live tag), Markdown links, images and
# autolinks, KaTeX, Streamlit directives and emoji shortcodes, and Markdown that only works where a
# line starts.
HOSTILE = [
    "qcdifr`<![CDATA[x><iframe/srcdoc=&lt;script&gt;parent.__xss='cdata-iframe'&lt;/script&gt;>]]>",
    "<?x ><img src=x onerror=parent.__xss=1>?>", "<style>@import url(http://127.0.0.1:9/x.css)</style>",
    "[click](javascript:parent.__xss=1)", "![img](http://127.0.0.1:9/i.png)", "<http://127.0.0.1:9/a>",
    "www.example.com", "http://127.0.0.1:9/", "mail@example.org", "$\\color{red}x$", "$$x$$",
    ":material/warning: :red[red] :smile: :streamlit:", "# heading", "> quote", "1. list", "- item", "  + item",
    "---", "a | b\n--|--\n1 | 2", "**b** _i_ ~~s~~ `c`", "&amp; &#60; &lt;", "\\*not escaped\\*", "<!-- x -->",
    "line one\nline two", "",
]
MD = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


def _paragraph(markdown: str) -> str:
    """What CommonMark (raw HTML allowed) makes of `markdown`, without the paragraph around it."""
    out = MD.render(markdown).strip()
    return out.removeprefix("<p>").removesuffix("</p>")


@pytest.mark.parametrize("value", HOSTILE)
def test_inert_renders_as_exactly_its_text_under_commonmark_with_html_on(value):
    # newlines become spaces; a paragraph drops the spaces at its ends; word joiners are invisible
    shown = _paragraph(inert(value)).replace("\u2060", "")
    assert shown == html.escape(re.sub(r"\s+", " ", value).strip(), quote=False)


# What GitHub's autolink transform looks for in a text node, whose references are already decoded
# (mdast-util-gfm-autolink-literal): a reference cannot hide these, so inert breaks them up.
GFM_URL = re.compile(r"(https?://|www(?=\.))([-.\w]+)([^ \t\r\n]*)", re.IGNORECASE)
GFM_EMAIL = re.compile(r"([-.\w+]+)@([-\w]+(?:\.[-\w]+)+)")


@pytest.mark.parametrize("value", ["www.example.com", "http://127.0.0.1:9/", "see HTTPS://x.org/a", "mail@example.org"])
def test_inert_leaves_no_autolink_in_the_text_it_displays(value):
    shown = html.unescape(inert(value))
    assert not GFM_URL.search(shown) and not GFM_EMAIL.search(shown)
    assert shown.replace("\u2060", "") == value


@pytest.mark.parametrize("value", [v for v in HOSTILE if v.strip()])
def test_inert_code_is_one_code_span_of_exactly_its_text(value):
    flat = re.sub(r"\s+", " ", value)
    assert _paragraph(inert_code(value)) == f"<code>{html.escape(flat, quote=False)}</code>"


def test_inert_keeps_inner_hyphens_and_plain_ids_as_they_are():
    assert inert("q-0001") == "q-0001" and inert_code("q-0001") == "`q-0001`"
    assert inert("- x").startswith("&#45;")


def test_inert_escapes_html_and_markdown_and_streamlit_syntax():
    out = inert('<script>alert(1)</script> <img src=x onerror=alert(1)> [a](javascript:x) $x$ :red[y] **b**')
    assert "<" not in out and ">" not in out and "[" not in out and "$" not in out and "*" not in out
    assert ":" not in out  # no :red[...] directives, no javascript: scheme


def test_highlight_marks_whole_words_only_and_escapes_before_marking():
    out = highlight_markup("Vacation starts; <b>vacation</b> & vacations", ["vacation"])
    assert out.count("<mark>") == 2  # "vacations" is another word
    assert "<b>" not in out and "&#60;b&#62;" in out
    # the only tags left are ours
    assert set(re.findall(r"</?(\w+)", out)) == {"mark"}


def test_highlight_a_term_inside_an_entity_name_does_not_break_escaping():
    out = highlight_markup("AT&T and amp", ["amp", "lt"])
    assert out.count("<mark>") == 1 and "&#38;" in out


def test_snippet_centres_on_the_first_term_and_marks_cuts():
    text = "word " * 100 + "parental leave is sixteen weeks " + "tail " * 100
    out = snippet(text, ["parental"], width=80)
    assert "parental" in out and out.startswith("… ") and out.endswith(" …") and len(out) <= 90


def test_snippet_of_short_text_is_the_text():
    assert snippet("  short\n text ", ["x"]) == "short text"


def test_highlight_terms_drop_stop_words():
    assert highlight_terms("How many vacation days do I get?") == ["many", "vacation", "days", "get"]
