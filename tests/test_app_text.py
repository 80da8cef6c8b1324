"""Document text shown safely: snippets, highlights, and markup that cannot run or format."""
from __future__ import annotations

import re

from app.label import highlight_terms
from labeler.text import highlight_markup, inert, snippet


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
