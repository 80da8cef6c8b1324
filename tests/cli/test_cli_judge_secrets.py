"""An openai judge's key from an environment variable (issue 23, item 1), end to end: `labeler judge` and
`labeler calibrate` against the rule server of tests/openai_support.py (word overlap on localhost, not a
language model), which requires the key and, when told, echoes the Authorization header back in its
errors. The key is sent, and it is in no output line, no file the runs leave (the database, its
journal, any log) and no saved declaration; a judge saved for a team calls only the hosts allowed
when it runs, not only when it was declared."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from judges_support import demo_with_run
from labeler.corpus import load_corpus
from labeler.errors import LabelerError
from labeler.paths import SAMPLE_CORPUS
from labeler_app import judges as J
from labeler_app.access import Actor, Role, local_actor
from openai_support import rule_server
from labeler_storage.store import open_store

TOKEN = "sk-audit-Q7v2-never-shown"
WRONG = "sk-audit-wrong-Zx81"


def _cli(env_key: str | None, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "JUDGE_KEY"}
    if env_key is not None:
        env["JUDGE_KEY"] = env_key
    return subprocess.run([sys.executable, "-m", "labeler_edge", *args], capture_output=True, text=True, env=env)


def _left_behind(*folders: Path) -> list[Path]:
    """Every file under the folders that holds a key's value."""
    return [p for folder in folders for p in folder.rglob("*") if p.is_file()
            and (TOKEN.encode() in p.read_bytes() or WRONG.encode() in p.read_bytes())]


def test_a_judge_s_key_from_the_environment_is_sent_and_never_shown_or_kept(tmp_path, monkeypatch):
    run_id = demo_with_run()
    home = Path(os.environ["LABELER_HOME"])
    db = str(home / "labeler.db")
    outputs = []
    with rule_server() as server:
        server.token = TOKEN
        declaration = (f'name = "keyed"\nkind = "openai"\nmodel = "rule-1"\nurl = "{server.url}"\nretries = 0\n'
                       'backoff = 0.0\nconcurrency = 1\n[headers]\nAuthorization = "Bearer ${JUDGE_KEY}"\n')
        (tmp_path / "keyed.toml").write_text(declaration)
        server.script = ["echo_auth"] * 3  # the endpoint echoes the header it got in its error
        holes = _cli(TOKEN, "judge", "default", "--db", db, "--judge", str(tmp_path / "keyed.toml"),
                     "--holes-from", str(run_id))
        outputs.append(holes)
        assert holes.returncode == 0 and "3 failed" in holes.stdout, holes.stdout + holes.stderr
        assert holes.stderr.count("rejected Bearer ***") == 3  # the failures are listed, the key masked
        assert server.requests[-1]["headers"]["Authorization"] == f"Bearer {TOKEN}"  # it was really sent
        wrong = _cli(WRONG, "judge", "default", "--db", db, "--judge", str(tmp_path / "keyed.toml"), "--judged",
                     "--limit", "2")
        outputs.append(wrong)  # the server refuses the key and says which one it got: masked too
        assert wrong.returncode == 0 and "2 failed" in wrong.stdout and "***" in wrong.stderr, wrong.stderr
        unset = _cli(None, "judge", "default", "--db", db, "--judge", str(tmp_path / "keyed.toml"), "--judged")
        outputs.append(unset)
        assert unset.returncode == 2 and "JUDGE_KEY" in unset.stderr and "Traceback" not in unset.stderr
        monkeypatch.setenv("LABELER_SYSTEM_ENV", "JUDGE_KEY")  # the operator offers the variable to the app
        with open_store(db) as store:
            J.declare_judge(store, local_actor("boss"), declaration)
            assert store.machine.judge_specs()["keyed"]["headers"]["Authorization"] == "Bearer ${JUDGE_KEY}"
        saved = _cli(TOKEN, "judge", "default", "--db", db, "--judge", "keyed", "--judged")
        outputs.append(saved)
        assert saved.returncode == 0 and "0 failed" in saved.stdout, saved.stdout + saved.stderr
        outputs.append(_cli(TOKEN, "calibrate", "default", "--db", db, "--judge", "keyed", "--bootstrap", "0"))
        assert outputs[-1].returncode == 0, outputs[-1].stderr
    for done in outputs:
        assert TOKEN not in done.stdout + done.stderr and WRONG not in done.stdout + done.stderr
    with open_store(db) as store:
        assert any(TOKEN in str(r["headers"]) for r in server.requests)
        assert len(store.machine.grades(judge="keyed")) > 0
    assert _left_behind(home, tmp_path) == []


def test_a_saved_team_judge_calls_only_the_hosts_allowed_when_it_runs(monkeypatch):
    demo_with_run()
    admin = Actor("boss", Role.ADMIN, team=True)
    with rule_server() as server:
        host = server.url.split("//")[1].split("/")[0]
        monkeypatch.setenv("LABELER_SYSTEM_HOSTS", host)
        text = f'name = "rule"\nkind = "openai"\nmodel = "rule-1"\nurl = "{server.url}"\nretries = 0\n'
        with open_store() as store:
            J.declare_judge(store, admin, text)
            monkeypatch.setenv("LABELER_SYSTEM_HOSTS", "judge.example.org")  # the operator takes it off the list
            with pytest.raises(LabelerError, match="may not call"):
                J.judge_holes(store, admin, "rule", None, load_corpus(SAMPLE_CORPUS), limit=2)
        assert server.requests == []


def test_a_saved_judge_reads_only_the_variables_offered_when_it_runs(monkeypatch):
    demo_with_run()
    with rule_server() as server:
        monkeypatch.setenv("LABELER_SYSTEM_ENV", "JUDGE_KEY")
        monkeypatch.setenv("JUDGE_KEY", TOKEN)
        text = (f'name = "keyed"\nkind = "openai"\nmodel = "rule-1"\nurl = "{server.url}"\nretries = 0\n'
                '[headers]\nAuthorization = "Bearer ${JUDGE_KEY}"\n')
        with open_store() as store:
            J.declare_judge(store, local_actor("boss"), text)
            monkeypatch.setenv("LABELER_SYSTEM_ENV", "OTHER")  # the operator no longer offers it
            with pytest.raises(LabelerError, match="JUDGE_KEY, which the server does not offer"):
                J.judge_holes(store, local_actor("boss"), "keyed", None, load_corpus(SAMPLE_CORPUS), limit=2)
        assert server.requests == []
