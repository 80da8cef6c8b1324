"""The judge's prompt: UMBRELA's 0-3 relevance prompt as a template, filled, varied, and its answer parsed.

`UMBRELA_PROMPT` is the zero-shot "bing" prompt of UMBRELA (Upadhyay, Pradeep, Thakur, Craswell
and Lin, "UMBRELA: UMbrela is the (Open-Source Reproduction of the) Bing RELevance Assessor",
arXiv:2406.06519), copied word for word from castorini/umbrela,
src/umbrela/prompts/prompt_templates/qrel_zeroshot_bing.yaml (commit e2c4e41, Apache-2.0), the
prompt its judge uses by default (prompt_type "bing", no few-shot examples). Two changes only:
its `{query}` is our `{question}`, and its `{passage}` is our `{title}` and `{text}` on two lines.

Parsing is strict, unlike UMBRELA's own parser (which falls back to 0 when it finds no score):
the answer must carry `##final score: N` (the format the prompt asks for; the last one counts
when the model repeats it with the same number) or be a bare integer; N outside 0-3, no score,
two different final scores, or an empty answer is an `UnparsedAnswer` (that pair's failure,
never a 0).
"""
from __future__ import annotations

import re

UMBRELA_PROMPT = """\
Given a query and a passage, you must provide a score on an integer scale of 0 to 3 with the following meanings:
0 = represent that the passage has nothing to do with the query, 
1 = represents that the passage seems related to the query but does not answer it, 
2 = represents that the passage has some answer for the query, but the answer may be a bit unclear, or hidden amongst extraneous information and 
3 = represents that the passage is dedicated to the query and contains the exact answer.

Important Instruction: Assign category 1 if the passage is somewhat related to the topic but not completely, category 2 if passage presents something very important related to the entire topic but also has some extra information and category 3 if the passage only and entirely refers to the topic. If none of the above satisfies give it category 0.

Query: {question}
Passage: {title}
{text}

Split this problem into steps:
Consider the underlying intent of the search.
Measure how well the content matches a likely intent of the query (M).
Measure how trustworthy the passage is (T).
Consider the aspects above and the relative importance of each, and decide on a final score (O). Final score must be an integer value only.
Do not provide any code in result. Provide each score in the format of: ##final score: score without providing any reasoning."""

PLACEHOLDERS = ("question", "title", "text")
_PLACEHOLDER = re.compile(r"\{(question|title|text)\}")
_FINAL = re.compile(r"#+\s*final\s+score\s*[:=]\s*(-?\d+(?:\.\d+)?)", re.IGNORECASE)
_BARE = re.compile(r"\s*(-?\d+(?:\.\d+)?)\s*\.?\s*")
GRADES = range(0, 4)


class UnparsedAnswer(ValueError):
    """The judge's answer holds no single grade 0-3 (the message says why)."""


def template_problem(template: str) -> str | None:
    """Why `template` cannot be a judge prompt (no {question} or {text}), or None."""
    if not template.strip():
        return "the template is empty"
    found = set(_PLACEHOLDER.findall(template))
    missing = [p for p in ("question", "text") if p not in found]
    if missing:
        return f"the template has no {' or '.join('{' + p + '}' for p in missing)}, so the judge never sees it"
    return None


def render_prompt(template: str, question: str, title: str, text: str) -> str:
    """The template with {question}, {title} and {text} filled in one pass (other braces kept, and
    a document holding "{question}" is sent as written, not filled again)."""
    values = {"question": question, "title": title, "text": text}
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def document_first(template: str) -> str:
    """The position variant: the lines holding {title}/{text} moved before the line holding
    {question} (the rest unchanged), to see whether where the document sits changes the grade.
    ValueError when the template keeps them on one line."""
    lines = template.split("\n")
    q = [i for i, line in enumerate(lines) if "{question}" in line]
    d = [i for i, line in enumerate(lines) if "{text}" in line or "{title}" in line]
    if len(q) != 1 or not d or q[0] in d or d != list(range(d[0], d[-1] + 1)):
        raise ValueError("the template must hold {question} on one line and {title}/{text} on other, "
                         "adjacent lines to move the document")
    block = lines[d[0]:d[-1] + 1]
    rest = lines[:d[0]] + lines[d[-1] + 1:]
    at = rest.index(lines[q[0]])
    if d[0] < q[0]:
        return template  # the document comes first already
    return "\n".join(rest[:at] + block + rest[at:])


def parse_grade(answer: str) -> tuple[int, str | None]:
    """(grade, rationale or None) from a judge's answer; UnparsedAnswer when there is no single 0-3 grade."""
    if not answer or not answer.strip():
        raise UnparsedAnswer("the answer is empty")
    finals = _FINAL.findall(answer)
    if finals:
        if len(set(finals)) > 1:
            raise UnparsedAnswer(f"the answer gives several final scores ({', '.join(dict.fromkeys(finals))})")
        value = finals[-1]
        rationale = answer[:_FINAL.search(answer).start()].strip() or None
    else:
        bare = _BARE.fullmatch(answer)
        if bare is None:
            shown = " ".join(answer.split())[:80]
            raise UnparsedAnswer(f"no '##final score: N' and not a bare grade in the answer {shown!r}")
        value, rationale = bare.group(1), None
    if "." in value and not float(value).is_integer():
        raise UnparsedAnswer(f"grade {value} is not a whole number")
    grade = int(float(value))
    if grade not in GRADES:
        raise UnparsedAnswer(f"grade {grade} is outside the scale 0-3")
    return grade, rationale
