"""`make run` / `labeler app` listens on 127.0.0.1 only: a real server, asked from another address."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import REPO


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def other_address() -> str | None:
    """This machine's address on a non-loopback interface (nothing is sent), or None."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.255.255.255", 1))
            address = s.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else address


def test_make_run_starts_the_local_app():
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    run = makefile.split("\nrun:", 1)[1].split("\n\n", 1)[0]
    assert "labeler app --port" in run and "--host" not in run and "--team" not in run


def test_labeler_app_listens_on_loopback_only(tmp_path):
    address = other_address()
    if address is None:
        pytest.skip("no non-loopback interface to knock on")
    port = free_port()
    env = {**os.environ, "LABELER_HOME": str(tmp_path)}
    labeler = Path(sys.executable).with_name("labeler")  # the installed command, as `make run` calls it
    proc = subprocess.Popen([str(labeler), "app", "--port", str(port)], cwd=REPO, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                assert urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2).read() == b"ok"
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.3)
        with pytest.raises(OSError):  # refused: nothing listens there
            socket.create_connection((address, port), timeout=2).close()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
