"""Team mode: uploaded bytes are held only for people allowed to upload.

Streamlit stores every file a browser session PUTs to `/_stcore/upload_file/` in memory until
the session ends, whether or not the page shows an uploader, and before any sign-in: a visitor
on the sign-in screen could fill the server's memory. A janitor thread (one per process) drops,
every second, the files of any session that is not signed in as someone who may upload (an
admin), and of any session holding more than MAX_SESSION_BYTES. The team server (team_app.py) also
refuses such a session's upload before reading its body (`may_upload`); the janitor stays for a
session that stopped being allowed after its upload."""
from __future__ import annotations

import logging
import threading
import time

import streamlit as st

from labeler_pages._visitors import SessionSet

MAX_SESSION_BYTES = 1 << 30
SWEEP_SECONDS = 1.0
_uploaders = SessionSet()  # session ids signed in as someone who may upload
log = logging.getLogger("labeler.uploads")


def allow_uploads(allowed: bool) -> None:
    """Record whether this browser session may hold uploaded files, and start the janitor."""
    if _uploaders.mark(allowed):  # outside a Streamlit run (AppTest) there are no uploads to sweep
        _janitor()


def may_upload(session_id: str) -> bool:
    """True when the browser session `session_id` is signed in as someone who may upload."""
    return session_id in _uploaders


@st.cache_resource(show_spinner=False)
def _janitor() -> threading.Thread:
    thread = threading.Thread(target=_sweep_forever, name="labeler-upload-janitor", daemon=True)
    thread.start()
    return thread


def _sweep_forever() -> None:
    while True:
        time.sleep(SWEEP_SECONDS)
        try:
            sweep()
        except Exception:  # noqa: BLE001 - the janitor must outlive a surprise in Streamlit's internals
            log.exception("upload janitor")


def sweep() -> list[str]:
    """Drop the uploaded files no session may keep; the session ids swept."""
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return []
    manager = Runtime.instance().uploaded_file_mgr
    storage = getattr(manager, "file_storage", None)
    if storage is None:
        return []
    swept = []
    for session_id in list(storage):
        files = list(storage.get(session_id, {}).values())
        if files and (session_id not in _uploaders or sum(len(f.data) for f in files) > MAX_SESSION_BYTES):
            manager.remove_session_files(session_id)
            swept.append(session_id)
    return swept
