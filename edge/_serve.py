"""The app's server process: Streamlit's own `streamlit run`, patched before it accepts a connection.

`labeler app` (and the browser tests) start `python -m labeler_edge._serve run streamlit_app.py ...`: the
patch must be in place before the first message of a tab that reconnects after a restart, which
can be a click, before any script of this process has run. (The entry script applies it too, for a
server started with plain `streamlit run`; there it takes effect from the first page run on.)
This module imports nothing of the app: the server starts as fast as `python -m streamlit`.
"""
from __future__ import annotations

from streamlit.logger import get_logger

_LOG = get_logger(__name__)  # in the server's log, with Streamlit's own lines


def keep_clicks_in_unknown_fragments() -> None:
    """Patch `AppSession.request_rerun` (once per process): a user's rerun of a fragment this session
    does not hold becomes a whole-page rerun with the same widget values. Auto-reruns (`run_every`)
    of such a fragment are still dropped: they are timers of a page the next whole-page run redraws."""
    from streamlit.proto.ClientState_pb2 import ClientState
    from streamlit.runtime.app_session import AppSession

    original = AppSession.request_rerun
    if getattr(original, "keeps_unknown_fragment_clicks", False):
        return

    def request_rerun(self: AppSession, client_state: ClientState | None) -> None:
        if (client_state is not None and client_state.fragment_id and not client_state.is_auto_rerun
                and not self.has_fragment(client_state.fragment_id)):
            _LOG.info("A click in fragment %s, which this session does not hold (a restarted server, or "
                      "a page drawn before): rerunning the whole page with it.", client_state.fragment_id)
            whole = ClientState()
            whole.CopyFrom(client_state)
            whole.ClearField("fragment_id")
            client_state = whole
        original(self, client_state)

    request_rerun.keeps_unknown_fragment_clicks = True
    AppSession.request_rerun = request_rerun


if __name__ == "__main__":
    from streamlit.web.cli import main

    keep_clicks_in_unknown_fragments()
    main(prog_name="streamlit")  # as `python -m streamlit` calls it
