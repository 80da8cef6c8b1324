"""A real user's sign-in on a team server while hostile signed-out sessions spray sign-ins and uploads.

Starts the team server (`python -m labeler_edge._serve run team_app.py`, what `labeler app --team` runs) on
loopback against a fresh LABELER_HOME on SQLite, with two accounts. Then: a real user signs in,
ROUNDS times one after another, each in a new Streamlit session (the protocol client of
tests/streamlit_client.py: a session as a browser tab holds it); then SESSIONS hostile clients
start (tests/signin_load.py: each sprays wrong passwords at the other account and at made-up
addresses as fast as the server answers, and PUTs 8 MB uploads into its session), and the real user
signs in again and again for SECONDS, in three phases: sign-in sprayers alone, uploaders alone,
both (new clients each phase). Prints the median and p95 of each, the ratio to the no-attack run,
what the attack did, the server's CPU time and memory, and the load average (the machine's, bench
included). The hostile threads run at nice 19: the attack comes from other machines, so the bench's
own CPU must not take the server's cores.

    python bench/bench_signin_load.py [SESSIONS=20] [SECONDS=30] [ROUNDS=10] [--postgresql] [--chromium]

--postgresql: the team database on a PostgreSQL server of its own (tests/pg_support.py starts one as
the postgres user), as a team deployment runs it, instead of SQLite.
--chromium: the real user signs in in Chromium (a new browser context each time: page load to the form
shown, click on Sign in to "Signed in as" shown) instead of the protocol client.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from _common import percentiles  # noqa: E402
from signin_load import ChromiumSignIn, real_sign_in, run_load  # noqa: E402


def main(sessions: int = 20, seconds: float = 30.0, rounds: int = 10, *, postgresql: bool = False,
         chromium: bool = False) -> None:
    sign_in = ChromiumSignIn() if chromium else real_sign_in
    try:
        result = _run(sessions, seconds, rounds, postgresql, sign_in)
    finally:
        if chromium:
            sign_in.close()
    _report(result, sessions, seconds, postgresql, chromium)


def _run(sessions: int, seconds: float, rounds: int, postgresql: bool, sign_in):
    with tempfile.TemporaryDirectory(prefix="bench-signin-") as tmp:
        if postgresql:
            from pg_support import PostgresServer, find_bindir
            bindir = find_bindir()
            if bindir is None:
                raise SystemExit("bench_signin_load: --postgresql needs the PostgreSQL binaries (see TESTING.md)")
            pg = PostgresServer(bindir)
            pg.start()
            try:
                return run_load(Path(tmp), sessions=sessions, seconds=seconds, rounds=rounds,
                                db_url=pg.database(), sign_in=sign_in)
            finally:
                pg.stop()
        return run_load(Path(tmp), sessions=sessions, seconds=seconds, rounds=rounds, sign_in=sign_in)


def _report(result, sessions: int, seconds: float, postgresql: bool, chromium: bool) -> None:
    base = result.baseline
    print(f"team server on {'PostgreSQL' if postgresql else 'SQLite'}, the real user in "
          f"{'Chromium' if chromium else 'the protocol client'}, loopback, {os.cpu_count()} cores; {sessions} hostile sessions, "
          f"{seconds:.0f} s per phase; server memory {result.rss_before:.0f} MB before")
    b50, b95 = percentiles([t.sign_in for t in base])
    f50, f95 = percentiles([t.form for t in base])
    print(f"no attack: sign-in median {b50:.3f} s p95 {b95:.3f} s; form shown median {f50:.3f} s p95 {f95:.3f} s "
          f"({len(base)} sign-ins)")
    for phase in result.phases:
        d50, d95 = percentiles([t.sign_in for t in phase.during])
        g50, g95 = percentiles([t.form for t in phase.during])
        a = phase.attack
        print(f"attacked by {phase.name}: sign-in median {d50:.3f} s p95 {d95:.3f} s (ratio {d50 / b50:.2f}x, "
              f"{d95 / b95:.2f}x); form shown median {g50:.3f} s p95 {g95:.3f} s ({len(phase.during)} sign-ins)\n"
              f"  the attack: {a.sign_ins} wrong sign-ins ({a.refused_fast} refused before any check, "
              f"{a.busy} as busy), "
              f"{a.uploads} uploads of 8 MB ({a.uploads_taken} taken), {len(a.errors)} errors {a.errors[:2]}\n"
              f"  server: {phase.server_cpu:.1f} s of CPU in {phase.seconds:.0f} s, "
              f"memory at most {phase.rss_max:.0f} MB; "
              f"load average {phase.load_min:.1f} to {phase.load_max:.1f}")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    main(*(float(a) if i == 1 else int(a) for i, a in enumerate(args[:3])), postgresql="--postgresql" in sys.argv,
         chromium="--chromium" in sys.argv)
