"""Search systems in the app: declare an HTTP endpoint as data, test-query it, save it by name,
score it (or an uploaded TREC run) against the golden set.

A declared endpoint makes the server send requests where it says, so only admins declare one
(`Can.DECLARE_SYSTEMS`), and a declaration may read only the environment variables the server's
operator lists in `LABELER_SYSTEM_ENV` (comma-separated): otherwise a declaration like
`url = "https://elsewhere/?x=${DATABASE_PASSWORD}"` would send a server secret away. Python
callables run code, so they are CLI-only (`labeler eval --system pkg.mod:fn`). Saved
declarations live in the team settings; a literal secret is refused (write `${NAME}`).

In a team deployment a declared endpoint may call only the hosts the operator lists in
`LABELER_SYSTEM_HOSTS` ("host" or "host:port", comma-separated; none when unset), redirects
included: the server's own network (a metadata service, a database's HTTP port, an admin
console on localhost) is not for a browser user to probe, admin or not. The local single-user
app calls what its user declares.
"""
from __future__ import annotations

import json
import os
import re
import tomllib
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from labeler.corpus import Corpus
from labeler.errors import ConfigError, InputError
from labeler.golden import GoldenSet
from labeler.progress import Progress
from labeler.runfile import parse_run_bytes
from labeler.systems import HttpSystem, QueryProbe, RunFileSystem, System
from labeler.systems.endpoint_spec import redact, strings_in
from labeler.systems.http import DEFAULT_PORTS, host_allowed
from labeler.systems.secrets import literal_secrets, mask_url
from labeler_app import runs
from labeler_app.access import Actor, Can
from labeler_app.background import BackgroundCalls, Pending
from labeler_storage import Store

if TYPE_CHECKING:  # pragma: no cover - the page's view of a run; imported where it is built
    from labeler_app.evaluate import RunView

SYSTEM_ENV = "LABELER_SYSTEM_ENV"
SYSTEM_HOSTS = "LABELER_SYSTEM_HOSTS"
_ENV_REF = re.compile(r"\$\{([^}]*)\}")
MAX_RUN_BYTES = 50 << 20  # an uploaded TREC run file
EXAMPLE = '''name = "labeler-serve"
url = "http://127.0.0.1:8000/search"
method = "POST"
timeout = 10
retries = 3
concurrency = 4

[body]
query = "{query}"
k = "{k}"

[response]
hits = "hits"
id = "doc_id"
score = "score"
'''


def allowed_env() -> set[str]:
    """The environment variables a declared endpoint may read (LABELER_SYSTEM_ENV)."""
    return {n.strip() for n in os.environ.get(SYSTEM_ENV, "").split(",") if n.strip()}


def endpoint_hosts(actor: Actor) -> frozenset[str] | None:
    """The hosts `actor`'s declared endpoints may call: the LABELER_SYSTEM_HOSTS list in a team
    deployment (empty when unset), None (any) in the local app."""
    if not actor.team:
        return None
    return frozenset(h.strip().lower() for h in os.environ.get(SYSTEM_HOSTS, "").split(",") if h.strip())


def check_host(url: str, hosts: frozenset[str] | None) -> None:
    """InputError unless the declared URL's host (its ${NAME}s resolved) is one `hosts` allows."""
    if hosts is None:
        return
    netloc = urllib.parse.urlsplit(url).netloc
    resolved = urllib.parse.urlsplit(_ENV_REF.sub(lambda m: os.environ.get(m.group(1), ""), url))
    try:
        port = resolved.port or DEFAULT_PORTS.get(resolved.scheme)
    except ValueError:
        port = None
    if "{" in netloc or not resolved.hostname or not host_allowed(resolved.hostname, port, hosts):
        shown = netloc if "${" not in netloc else "a host taken from the environment"
        raise InputError(f"this server may not call {shown}: in a team deployment declared endpoints call only the "
                         f"hosts the operator lists",
                         hint=f"ask the operator to add it to {SYSTEM_HOSTS} (now: {', '.join(sorted(hosts)) or 'none'}).")


def parse_declaration(text: str, hosts: frozenset[str] | None = None) -> dict[str, Any]:
    """An endpoint declaration typed in the app (TOML) as a checked dict: kind http, env references
    only to allowed variables, no literal secret, a host in `hosts` (None: any)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"the declaration is not valid TOML: {exc}", hint="see the example; https://toml.io.") from None
    if data.get("kind", "http") != "http":
        raise InputError("the app declares HTTP endpoints only",
                         hint="score a Python callable with `labeler eval --system pkg.mod:fn`, or upload a run file.")
    data["kind"] = "http"
    check_env(HttpSystem(data).spec)  # validates every field (one line naming it), refuses a literal secret
    check_host(str(data.get("url", "")), hosts)
    return data


def check_env(spec: Any) -> None:
    """InputError when a declared endpoint reads an environment variable the operator does not offer now
    (LABELER_SYSTEM_ENV): checked when it is saved and again whenever a saved one is used, since the list
    may have been narrowed since."""
    refs = {r for text in (spec.url, *spec.headers.values(), *strings_in(spec.body)) for r in _ENV_REF.findall(text)}
    if refused := sorted(refs - allowed_env()):
        raise InputError(f"the declaration reads environment variable(s) {', '.join(refused)}, which the server does "
                         "not offer to declared systems",
                         hint=f"the server's operator lists the variables a system may read in {SYSTEM_ENV} "
                              f"(now: {', '.join(sorted(allowed_env())) or 'none'}).")


def saved_systems(store: Store) -> dict[str, dict[str, Any]]:
    """Saved systems by name: {"declaration": the checked dict, "text": the TOML as typed}."""
    return dict(store.accounts.settings().get("systems") or {})


def shown_text(saved: Mapping[str, Any]) -> str:
    """A saved declaration's TOML as the Evaluate page shows it, to viewers and admins alike: as
    typed, with any literal secret (in one saved before they were refused) masked as "***"."""
    declaration = saved.get("declaration") if isinstance(saved.get("declaration"), Mapping) else {}
    return redact(str(saved.get("text") or ""), [value for _, value in literal_secrets(declaration)])


def save_system(store: Store, actor: Actor, text: str) -> str:
    """Check and save a declaration under its name (replacing one of that name); the name."""
    actor.require(Can.DECLARE_SYSTEMS)
    data = parse_declaration(text, endpoint_hosts(actor))
    systems = saved_systems(store)
    systems[data["name"]] = {"declaration": data, "text": text}
    store.accounts.set_setting("systems", systems, by=actor.name)
    return data["name"]


def delete_system(store: Store, actor: Actor, name: str) -> bool:
    """Forget a saved system; False if there was none."""
    actor.require(Can.DECLARE_SYSTEMS)
    systems = saved_systems(store)
    if systems.pop(name, None) is None:
        return False
    store.accounts.set_setting("systems", systems, by=actor.name)
    return True


def test_query(actor: Actor, text: str, question: str, k: int = 10) -> QueryProbe:
    """Send one question to a declaration as typed (not saved): the raw answer and the mapped hits."""
    actor.require(Can.DECLARE_SYSTEMS)
    if not question.strip():
        raise InputError("the test question is empty", hint="type a question to send.")
    hosts = endpoint_hosts(actor)
    with HttpSystem(parse_declaration(text, hosts), allowed_hosts=hosts) as system:  # the host is checked
        return system.test_query(question.strip(), k)


@dataclass(frozen=True)
class ProbeView:
    """A test query, ready to show."""

    status: str
    hits: list[dict[str, Any]]
    raw: str
    error: str


def probe_view(probe: QueryProbe, corpus: Corpus) -> ProbeView:
    """The status line, the mapped hits (with titles from the open corpus) and the raw answer."""
    hits = [{"rank": i, "doc_id": h.doc_id, "score": h.score,
             "title": (corpus.get(h.doc_id).title if corpus.get(h.doc_id) else "(not in the open corpus)")}
            for i, h in enumerate(probe.hits or (), start=1)]
    status = f"HTTP {probe.status}" if probe.status else "no answer"
    return ProbeView(f"{status} in {probe.seconds * 1000:.0f} ms · {len(hits)} hits mapped", hits,
                     (probe.raw_text or "")[:20_000], str(probe.error or ""))


def system_for(store: Store, actor: Actor, name: str) -> System:
    """A saved system, ready to search on `actor`'s behalf (a team's endpoints call only listed hosts,
    also when the list changed since the system was saved)."""
    saved = saved_systems(store).get(name)
    if saved is None:
        raise InputError(f"no saved system named {name!r}", hint="declare it first, or pick another.")
    return endpoint(saved["declaration"], endpoint_hosts(actor), source=f"saved system {name!r}")


def endpoint(declaration: Mapping[str, Any], hosts: frozenset[str] | None, *, source: str | None = None) -> HttpSystem:
    """A declared endpoint that calls only `hosts` (None: any) and reads only the variables offered now:
    refused now when its URL names another host or it reads a variable no longer offered, and on any
    request (a redirect too) that goes elsewhere."""
    check_host(str(declaration.get("url", "")), hosts)
    system = HttpSystem(declaration, source=source, allowed_hosts=hosts)
    check_env(system.spec)  # the operator's list as it is now (no connection is opened before the first request)
    return system


def top_documents(declaration: Mapping[str, Any], hosts: frozenset[str] | None, question: str,
                  k: int = 10) -> tuple[str, ...]:
    """A saved declaration's top k document ids for one question (the Label page's extra pool)."""
    with endpoint(declaration, hosts) as system:
        return tuple(h.doc_id for h in system.search(question, k))


_POOLING = BackgroundCalls(workers=4, ttl=600, name="pool-from-system")


def pooled_ranking(declaration: Mapping[str, Any], hosts: frozenset[str] | None, question: str, k: int = 10,
                   *, wait: float = 0.0) -> tuple[str, ...] | Pending:
    """`top_documents` asked in the background and kept 10 minutes: the ids, or `Pending` while the
    system has not answered within `wait` seconds (judging goes on; ask again on the next rerun).
    SearchFailed (and the rest of LabelerError) when the system failed."""
    key = (json.dumps(declaration, sort_keys=True), None if hosts is None else tuple(sorted(hosts)), question, k)
    return _POOLING.get(key, lambda: top_documents(declaration, hosts, question, k), wait=wait)


def uploaded_run(name: str, data: bytes, golden: GoldenSet) -> System:
    """A TREC run file uploaded in the app, as a system (the same parser as `labeler score`)."""
    if len(data) > MAX_RUN_BYTES:
        raise InputError(f"{name}: the run file is over {MAX_RUN_BYTES >> 20} MB", hint="score it with `labeler score`.")
    return RunFileSystem(parse_run_bytes(data, source=name), name=name, questions=golden.questions())


def run_system(store: Store, actor: Actor, system: System, corpus: Corpus, *, k: int = 100, name: str = "",
               stale: str = "include", corpus_path: str | None = None, progress: Progress | None = None,
               abstain_threshold: float | None = None, allow_missing: bool = False) -> "RunView":
    """Score any system (the built-in pipeline included) against the golden set and save the run with
    what made it (`RunOrigin`: its config, or its declaration with secrets excluded) and the corpus
    the judgments were checked against; the saved run, with the report just computed (not read back)."""
    from labeler_app.evaluate import RunView

    actor.require(Can.RUN_EVALUATION)
    golden = store.golden.export()
    runs.require_judgments(golden)
    _, report = runs.evaluate_system(golden, system, k=k, corpus=corpus, stale=stale, progress=progress,
                                     abstain_threshold=abstain_threshold, allow_missing=allow_missing)
    record = runs.save_report(store, report, runs.RunOrigin.of(system), golden, corpus_fingerprint=corpus.fingerprint,
                              name=name, by=actor.name, corpus_path=corpus_path)
    return RunView(record, report)


def system_line(config: Mapping[str, Any]) -> str:
    """What made a saved run, for its caption: "endpoint labeler-serve (http://…)" or ""."""
    described = config.get("system") if isinstance(config, Mapping) else None
    if not isinstance(described, Mapping):
        return ""
    where = described.get("url") or described.get("path") or described.get("target") or ""
    where = mask_url(str(where)) if described.get("url") else where  # a run saved before literals were refused
    return f"system {described.get('name', '?')} ({described.get('kind', '?')}{': ' + str(where) if where else ''})"
