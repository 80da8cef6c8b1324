"""What a system declaration file is told when it is short or wrong: README's examples load as
written (a missing name is the file's stem), a missing kind is inferred from the keys and a
missing url is called missing, a missing `${NAME}` names the file, and a system that answers no
question gets one line with one hint."""
from __future__ import annotations

import re
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import REPO, SAMPLE
from labeler.errors import ConfigError
from labeler.systems import QuestionError, load_system, system_from_dict
from labeler_app.runs import no_answer_error
from labeler_edge.cli import cli

RESPONSE = '[response]\nhits = "results"\nid = "id"\nscore = "score"\n'


def readme_serve_declaration() -> str:
    """The `labeler serve` declaration README gives inline: its url, body and response keys, as TOML."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    paragraph = readme[readme.index("Its declaration is"):]
    paragraph = paragraph[:paragraph.index("\n\n")]
    keys = re.findall(r"`((?:url|body|response) = [^`]+)`", paragraph)
    assert [k.split()[0] for k in keys] == ["url", "body", "response"], paragraph
    return "\n".join(keys) + "\n"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # free once closed: nothing listens there


def test_readme_serve_declaration_loads_named_after_its_file(tmp_path):
    path = tmp_path / "labeler-serve.toml"
    path.write_text(readme_serve_declaration(), encoding="utf-8")
    system = load_system(path)
    assert system.kind == "http" and system.name == "labeler-serve" and system.spec.method == "POST"
    assert system.spec.body == {"query": "{query}", "k": "{k}"} and system.spec.response["id"] == "doc_id"
    path.write_text('name = "mine"\n' + readme_serve_declaration(), encoding="utf-8")
    assert load_system(path).name == "mine"  # a name in the file wins
    path.write_text('name = " "\n' + readme_serve_declaration(), encoding="utf-8")
    with pytest.raises(ConfigError, match="name is missing or empty"):
        load_system(path)


def test_declaration_without_kind_or_url_is_told_the_url_is_missing(tmp_path):
    path = tmp_path / "nourl.toml"
    path.write_text('[body]\nquery = "{query}"\n' + RESPONSE, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_system(path)
    message = str(info.value)
    assert message.startswith(f"{path}: endpoint 'nourl': url is missing. Hint: add url = ") and "kind must" not in message
    with pytest.raises(ConfigError, match="'x': url is missing"):
        system_from_dict({"name": "x", "method": "GET", "response": {"hits": "h", "id": "i"}})


def test_declaration_without_kind_takes_the_kind_of_its_keys(tmp_path):
    (tmp_path / "mine.trec").write_text("q1 Q0 d1 1 0.5 t\n", encoding="utf-8")
    assert system_from_dict({"path": "mine.trec"}, base_dir=tmp_path).kind == "run"
    with pytest.raises(ConfigError, match="python system 'nowhere_module_x:f': cannot import"):
        system_from_dict({"target": "nowhere_module_x:f"})
    with pytest.raises(ConfigError, match=r"no kind, and its keys \(name\) do not say which.*Hint: add kind"):
        system_from_dict({"name": "lonely"})
    with pytest.raises(ConfigError, match="run system: unknown key.s. url"):
        system_from_dict({"kind": "run", "url": "http://127.0.0.1:9/"})  # a kind given is never guessed over


def test_missing_secret_names_the_declaration_file(tmp_path, monkeypatch):
    monkeypatch.delenv("LABELER_PROBE_ABSENT", raising=False)
    path = tmp_path / "acme.toml"
    path.write_text(f'url = "http://127.0.0.1:{closed_port()}/search"\n[headers]\n'
                    'Authorization = "Bearer ${LABELER_PROBE_ABSENT}"\n[body]\nquery = "{query}"\n' + RESPONSE,
                    encoding="utf-8")
    system = load_system(path)
    for attempt in (lambda: system.search_many({"q1": "x"}, 1), lambda: system.test_query("x")):
        with pytest.raises(ConfigError) as info:
            attempt()
        assert str(info.value).startswith(f"{path}: endpoint 'acme': header 'Authorization' references "
                                          "${LABELER_PROBE_ABSENT}, but the environment variable")
    result = CliRunner().invoke(cli, ["eval", str(SAMPLE), str(SAMPLE / "golden.jsonl"), "--system", str(path)])
    assert result.exit_code == 2 and f"Error: {path}: endpoint 'acme'" in result.stderr


def test_cli_eval_system_that_answers_nothing_says_so_in_one_line_with_one_hint(tmp_path):
    path = tmp_path / "down.toml"
    path.write_text(f'url = "http://127.0.0.1:{closed_port()}/search"\nretries = 0\n[body]\nquery = "{{query}}"\n'
                    + RESPONSE, encoding="utf-8")
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join((SAMPLE / "golden.jsonl").read_text(encoding="utf-8").splitlines(True)[:3]),
                      encoding="utf-8")
    result = CliRunner().invoke(cli, ["eval", str(SAMPLE), str(golden), "--system", str(path)])
    [line] = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert result.exit_code == 2 and result.stderr.count("Error:") == 1
    assert line.startswith("Error: down: no question answered, all 3 failed (3 connection); first, q-0001: cannot "
                           "reach POST http://127.0.0.1:")
    assert line.count("cannot reach") == 1 and line.count("Hint:") == 1
    assert line.endswith("Hint: check the url and that the endpoint is running.")


def test_no_answer_error_without_a_first_hint_gives_a_general_one():
    errors = [QuestionError("q1", "mapping", "hit 0: doc id is empty"), QuestionError("q2", "timeout", "slow")]
    text = str(no_answer_error("acme", errors))
    assert text.startswith("acme: no question answered, all 2 failed (1 mapping, 1 timeout); first, q1: hit 0: "
                           "doc id is empty. Hint: try one question alone")
    assert text.count("Hint:") == 1
