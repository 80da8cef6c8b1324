"""The Corpus page's "Open another corpus" section: pick one (the sample, a server path, an upload),
see what it does to the golden set, confirm; then the new corpus's index is built right here.

Opening a corpus embeds every new document (minutes for thousands). The rerun after "Yes, open it"
builds the index at this section, next to the button that was pressed, with the build's progress
(documents embedded / total, time left): built at the top of the page, as on an ordinary visit, it
sat out of sight of an admin scrolled down to this button, who saw only a greyed page.
"""
from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from labeler.paths import SAMPLE_CORPUS
from labeler_app import corpus as cp
from labeler_app import workspace as ws
from labeler_app.access import Actor, Can
from labeler_app.corpus_files import corpus_roots
from labeler_app.stores import Store
from labeler_app.text import inert, inert_code
from labeler_pages._common import act, flash, guard, show_flash

PENDING = "corpus_pending"  # (path, corpus) checked and loaded, waiting for a yes
OPENED = "corpus_opened"  # "Yes, open it" was pressed: the next run builds the index in this section
SLOT = "_flash_open"  # what opening said, shown in this section


def just_opened() -> bool:
    """True on the run right after "Yes, open it" (once): build the index in this section, not at the top."""
    return bool(st.session_state.pop(OPENED, False))


def open_section(s: Store, me: Actor, path: str, n_questions: int, *, build: Callable[[], None] | None = None) -> None:
    """The section; right after "Yes, open it", `build` (which builds the open corpus's index,
    showing its progress where it is called) runs first, under the outcome of the opening."""
    st.subheader("Open another corpus", anchor=False)
    show_flash(SLOT)
    if build is not None:
        build()
    if not me.can(Can.OPEN_CORPUS):
        st.caption("Only an admin can open another corpus: it changes what everyone on this server works on.")
        return
    if n_questions:
        st.caption(f"The golden set has {n_questions} questions written against the open corpus; their document "
                   "ids must exist in the new one for their labels to count.")

    def _confirm(new_path: str, new_corpus) -> None:
        if act(ws.use_corpus, s, me, new_path, new_corpus, slot=SLOT):
            flash(f"Opened {inert(new_path)}: {len(new_corpus):,} documents.", "success", slot=SLOT)
            st.session_state[OPENED] = True
        st.session_state.pop(PENDING, None)

    if pending := st.session_state.get(PENDING):
        st.warning(cp.switch_preview(s, *pending).text)
        y, n = st.columns([1, 6])
        y.button("Yes, open it", key="confirm-open", type="primary", on_click=_confirm, args=pending)
        n.button("Cancel", key="cancel-open", on_click=lambda: st.session_state.pop(PENDING, None))
        return
    sample_tab, path_tab, upload_tab = st.tabs(["Sample corpus", "Path on the server", "Upload"])
    with sample_tab:
        st.caption(f"The bundled handbook corpus ({inert(str(SAMPLE_CORPUS))}).")
        if st.button("Open the sample corpus", key="open-sample", disabled=ws.is_sample_corpus(path)):
            st.session_state[PENDING] = guard(cp.open_sample, me)
            st.rerun()
    with path_tab:
        roots = ", ".join(inert_code(str(r)) for r in corpus_roots())
        new = st.text_input("File or folder under a corpus root", key="open_path", help=f"Corpus roots: {roots} "
                            "(set LABELER_CORPUS_ROOTS to change them).",
                            placeholder="corpus.jsonl, a CSV, a BEIR folder, or a folder of .txt/.md files")
        if st.button("Open", key="open-path"):
            if not new.strip():
                st.warning("Type the path of a file or folder under a corpus root first.")
                return
            st.session_state[PENDING] = guard(cp.open_server_path, me, new.strip())
            st.rerun()
    with upload_tab:
        up = st.file_uploader("JSONL, CSV, or a zip of .txt/.md files", type=["jsonl", "json", "ndjson", "csv", "zip"],
                              key="corpus_upload")
        if up is not None and st.button("Check and open", key="open-upload"):
            st.session_state[PENDING] = guard(cp.upload_corpus, me, up.name, up.getvalue())
            st.rerun()
