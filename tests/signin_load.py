"""Hostile signed-out sessions against a team server, and a real user's sign-in timed meanwhile
(bench/bench_signin_load.py prints the figures; tests/app/test_signin_load.py asserts the bound).

Each hostile session is a Streamlit session of its own client (its own `X-Forwarded-For`, as a
reverse proxy on the server's machine appends it: twenty machines, the case the per-client throttle
helps least), which sprays wrong passwords at addresses of the team and made-up ones as fast as the
server answers, while a second thread of the same client PUTs uploads of UPLOAD_BYTES into its
session. Everything stays on loopback and ends when `stop` is set.
"""
from __future__ import annotations

import itertools
import os
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from streamlit_client import StreamlitSession

SIGN_IN = "Sign in"
REAL, OTHER, PASSWORD = "real@example.org", "other@example.org", "correct horse battery"
UPLOAD_BYTES = 8 << 20  # per upload attempt: refused before its body is read, or it lands in memory
_CHUNK = os.urandom(1 << 16)  # made once and streamed: the client must cost little beside the server


@dataclass
class Attack:
    """What the hostile sessions did (counted by their threads)."""

    sign_ins: int = 0
    refused_fast: int = 0  # answered "too many failed sign-ins" (no password checked)
    busy: int = 0  # answered "the server is busy" (no password checked)
    uploads: int = 0
    uploads_taken: int = 0  # answered 2xx: bytes held by the server
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, **increments: int) -> None:
        with self.lock:
            for name, n in increments.items():
                setattr(self, name, getattr(self, name) + n)


def start_attack(url: str, sessions: int, stop: threading.Event, *, targets: list[str], spray: bool = True,
                 upload: bool = True, net: int = 66, made_up: bool = True) -> tuple[Attack, list[threading.Thread]]:
    """`sessions` hostile clients of 10.`net`.0.0/16 (each a sign-in sprayer and an uploader) until `stop` is set."""
    attack = Attack()
    threads = []
    for i in range(sessions):
        client = f"10.{net}.{i // 250}.{i % 250 + 1}"
        if spray:
            threads.append(threading.Thread(target=_spray, args=(url, client, targets, stop, attack, made_up),
                                            daemon=True))
        if upload:
            threads.append(threading.Thread(target=_upload, args=(url, client, stop, attack), daemon=True))
    for thread in threads:
        thread.start()
    return attack, threads


def _elsewhere() -> None:
    """Nice 19 for this hostile thread (Linux): the attack comes from other machines, so its own CPU must not
    take the server's cores on this one (what it costs the server is what is measured)."""
    if sys.platform.startswith("linux"):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)


def _spray(url: str, client: str, targets: list[str], stop: threading.Event, attack: Attack, made_up: bool) -> None:
    _elsewhere()
    guesses = (f"guess {n} {client}" for n in itertools.count())
    addresses = itertools.cycle(targets + [f"nobody{n}@{client}.example" for n in range(5 if made_up else 0)])
    try:
        session = StreamlitSession(url, headers={"X-Forwarded-For": client})
        while not stop.is_set():
            run = session.submit(SIGN_IN, **{"E-mail": next(addresses), "Password": next(guesses)})
            attack.count(sign_ins=1, refused_fast=run.says("too many failed sign-ins"), busy=run.says("is busy"))
        session.close()
    except Exception as exc:  # noqa: BLE001 - reported by the caller: a hostile session that died proves nothing
        if not stop.is_set():
            attack.errors.append(f"sprayer {client}: {exc!r}")


def _upload(url: str, client: str, stop: threading.Event, attack: Attack) -> None:
    _elsewhere()
    try:
        session = StreamlitSession(url, headers={"X-Forwarded-For": client})
        with httpx.Client(timeout=30, headers={"X-Forwarded-For": client}) as http:
            for n in itertools.count():
                if stop.is_set():
                    break
                target = f"{url}/_stcore/upload_file/{urllib.parse.quote(session.session_id)}/file-{n}"
                try:
                    status = http.put(target, content=_body(), headers=_MULTIPART).status_code
                except httpx.TransportError:
                    status = 403  # answered and closed before the body was all sent: refused
                attack.count(uploads=1, uploads_taken=200 <= status < 300)
        session.close()
    except Exception as exc:  # noqa: BLE001
        if not stop.is_set():
            attack.errors.append(f"uploader {client}: {exc!r}")


_BOUNDARY = "hostile-upload"
_MULTIPART = {"Content-Type": f"multipart/form-data; boundary={_BOUNDARY}", "Content-Length": str(UPLOAD_BYTES)}


def _body():
    """UPLOAD_BYTES of a multipart form with one file, as a browser's upload sends it (bar the exact length)."""
    yield (f"--{_BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"c.jsonl\"\r\n"
           "Content-Type: application/octet-stream\r\n\r\n").encode()
    for _ in range(UPLOAD_BYTES // len(_CHUNK) - 1):
        yield _CHUNK


@dataclass(frozen=True)
class SignInTime:
    """One real sign-in: the form shown (connect and first run), and the password sent -> signed-in page drawn."""

    form: float
    sign_in: float


_people = itertools.count()


def real_sign_in(url: str, email: str, password: str) -> SignInTime:
    """A real user's sign-in in a new session, from a client of its own (each a colleague at their own
    machine: one machine signing in twice a second would be paced, pages/_visitors.py); an
    AssertionError when it did not sign in."""
    n = next(_people)
    client = f"10.1.{n // 250}.{n % 250 + 1}"
    started = time.perf_counter()
    session = StreamlitSession(url, headers={"X-Forwarded-For": client})
    form = time.perf_counter() - started
    try:
        run = session.submit(SIGN_IN, **{"E-mail": email, "Password": password})
        assert run.says("Signed in as"), f"not signed in: {run.texts}"
        return SignInTime(form, run.seconds)
    finally:
        session.close()


class ChromiumSignIn:
    """A real user's sign-in in Chromium: each a new browser context (no cookie, no cache) from a client
    of its own. `form`: from navigation to the sign-in form shown; `sign_in`: from the click on Sign in
    to "Signed in as" shown. The browser lives in the thread that makes it (the attack runs in others)."""

    def __init__(self) -> None:
        from playwright.sync_api import sync_playwright

        from browser_support import launch_chromium
        self._playwright = sync_playwright().start()
        self._browser = launch_chromium(self._playwright)

    def __call__(self, url: str, email: str, password: str) -> SignInTime:
        n = next(_people)
        context = self._browser.new_context(extra_http_headers={"X-Forwarded-For": f"10.2.{n // 250}.{n % 250 + 1}"})
        try:
            page = context.new_page()
            page.set_default_timeout(60_000)
            started = time.perf_counter()
            page.goto(url)
            page.get_by_label("E-mail").wait_for()
            form = time.perf_counter() - started
            page.get_by_label("E-mail").fill(email)
            page.get_by_role("textbox", name="Password").fill(password)
            started = time.perf_counter()
            page.get_by_role("button", name=SIGN_IN).click()
            page.get_by_text("Signed in as").first.wait_for()
            return SignInTime(form, time.perf_counter() - started)
        finally:
            context.close()

    def close(self) -> None:
        self._browser.close()
        self._playwright.stop()


def server_rss_mb(pid: int) -> float:
    """Resident memory of the server process (and its children), in MB."""
    total = 0
    for proc in [pid, *_children(pid)]:
        try:
            with open(f"/proc/{proc}/status") as f:
                total += next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
        except (OSError, StopIteration):
            pass
    return total / 1024


def server_cpu_seconds(pid: int) -> float:
    """CPU time (user and system) the server process has used so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


# name: (spray, upload, made-up addresses too). "refused": every try is at an address already waiting, so it is
# refused before any check, and its client soon waits too: the sprayers loop on refusals as fast as they come.
PHASES = {"sign-ins": (True, False, True), "refused": (True, False, False), "uploads": (False, True, True),
          "both": (True, True, True)}


@dataclass
class Phase:
    """The real user's sign-ins while one kind of attack ran, and what it did and cost."""

    name: str
    during: list[SignInTime]
    attack: Attack
    rss_max: float
    load_min: float
    load_max: float
    server_cpu: float  # CPU seconds the server used during the phase
    seconds: float


@dataclass
class LoadResult:
    """A run of `run_load`: the real user's sign-ins without an attack, then during each phase."""

    baseline: list[SignInTime]
    rss_before: float
    phases: list[Phase]


def run_load(home: Path, *, sessions: int, seconds: float, rounds: int,
             phases: tuple[str, ...] = tuple(PHASES), db_url: str | None = None,
             sign_in: Callable[[str, str, str], SignInTime] = real_sign_in) -> LoadResult:
    """A team server under `home` on `db_url` (default: SQLite in `home`); `rounds` real sign-ins, then for
    each of `phases` (PHASES) real sign-ins for `seconds` while `sessions` hostile clients run (new clients
    each phase). `sign_in` is the real user: the protocol client (real_sign_in) or a ChromiumSignIn."""
    from browser_support import AppServer

    from labeler_storage import open_store

    store = open_store(db_url or f"sqlite:///{home / 'labeler.db'}")
    store.accounts.add_user(REAL, "annotator", password=PASSWORD)
    store.accounts.add_user(OTHER, "annotator", password="another good password")
    store.close()
    with _team_environment(db_url):
        server = AppServer(home, script="team_app.py")  # what `labeler app --team` runs; it copies os.environ
    try:
        server.wait_healthy()
        sign_in(server.url, REAL, PASSWORD)  # the first run imports the pages: not a sign-in's cost
        baseline = [sign_in(server.url, REAL, PASSWORD) for _ in range(rounds)]
        result = LoadResult(baseline, server_rss_mb(server.proc.pid), [])
        for net, name in enumerate(phases, start=66):
            result.phases.append(_phase(server, name, sessions, seconds, net, sign_in))
        return result
    finally:
        server.stop()


@contextmanager
def _team_environment(db_url: str | None) -> Iterator[None]:
    """LABELER_TEAM=1, the database URL when given, and no secrets file (no OpenID Connect) while the block runs."""
    saved = {k: os.environ.pop(k, None) for k in ("LABELER_TEAM", "STREAMLIT_SECRETS_FILES", "LABELER_DB_URL")}
    os.environ["LABELER_TEAM"] = "1"
    if db_url:
        os.environ["LABELER_DB_URL"] = db_url
    try:
        yield
    finally:
        os.environ.pop("LABELER_TEAM")
        os.environ.pop("LABELER_DB_URL", None)
        os.environ.update({k: v for k, v in saved.items() if v is not None})


def _phase(server, name: str, sessions: int, seconds: float, net: int,
           sign_in: Callable[[str, str, str], SignInTime]) -> Phase:
    spray, upload, made_up = PHASES[name]
    stop = threading.Event()
    cpu_before, started = server_cpu_seconds(server.proc.pid), time.monotonic()
    attack, threads = start_attack(server.url, sessions, stop, targets=[OTHER], spray=spray, upload=upload, net=net,
                                   made_up=made_up)
    try:
        during, loads, rss_max = [], [], 0.0
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            during.append(sign_in(server.url, REAL, PASSWORD))
            rss_max = max(rss_max, server_rss_mb(server.proc.pid))
            loads.append(os.getloadavg()[0])
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
    cpu = server_cpu_seconds(server.proc.pid) - cpu_before
    return Phase(name, during, attack, rss_max, min(loads), max(loads), cpu, time.monotonic() - started)
