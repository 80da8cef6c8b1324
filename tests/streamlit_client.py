"""A Streamlit browser session without a browser: the websocket protocol Streamlit's frontend speaks
(`/_stcore/stream`, BackMsg up, ForwardMsg down, both protobuf), enough to fill a form and press its
button. Costs the server what a browser tab costs it (a session, a script run per rerun) and the
client a few milliseconds, so a test can run many of them on two cores.

Widgets are found by label in the elements a run sent; a rerun sends every widget value the page
holds, as the frontend does (a form's values travel only with its submit button's trigger).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.sync.client import connect


@dataclass
class Run:
    """What one script run sent: widgets by label, texts (markdown, captions, alerts) in order."""

    widgets: dict[str, str] = field(default_factory=dict)  # label -> widget id
    texts: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def says(self, fragment: str) -> bool:
        return any(fragment in text for text in self.texts)


class StreamlitSession:
    """One browser tab's session on a Streamlit server at `url` ("http://127.0.0.1:8501"), sending
    `headers` with its websocket upgrade (what `st.context.headers` shows the script)."""

    def __init__(self, url: str, *, headers: dict[str, str] | None = None, timeout: float = 60.0,
                 query: str = "") -> None:
        self.timeout, self.query = timeout, query  # query: the page URL's query string ("annotator=asha")
        self.ws = connect(url.replace("http", "ws", 1) + "/_stcore/stream", subprotocols=["streamlit"],
                          additional_headers={"User-Agent": "streamlit-client", **(headers or {})},
                          open_timeout=timeout, max_size=None, legacy=True)
        self.session_id = ""
        self.last = self.rerun()

    def rerun(self, values: dict[str, str] | None = None, trigger: str | None = None, *,
              picks: dict[str, list[str]] | None = None) -> Run:
        """Run the page with text widget `values` (id -> text), option widget `picks` (id -> the options'
        labels, as a segmented control sends them) and button `trigger` pressed; wait for its end (a run the
        script itself starts with `st.rerun` is waited for too)."""
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string = self.query
        for widget_id, text in (values or {}).items():
            w = state.widget_states.widgets.add()
            w.id, w.string_value = widget_id, text
        for widget_id, labels in (picks or {}).items():
            w = state.widget_states.widgets.add()
            w.id = widget_id
            w.string_array_value.data.extend(labels)
        if trigger:
            w = state.widget_states.widgets.add()
            w.id, w.trigger_value = trigger, True
        started = time.perf_counter()
        self.ws.send(msg.SerializeToString())
        run = self._read_run()
        run.seconds = time.perf_counter() - started
        self.last = run
        return run

    def submit(self, button: str, **typed: str) -> Run:
        """Type `typed` (label -> text) into the last run's text inputs and press the button labelled `button`."""
        ids = self.last.widgets
        return self.rerun({ids[label]: text for label, text in typed.items()}, trigger=ids[button])

    def _read_run(self) -> Run:
        run, deadline = Run(), time.monotonic() + self.timeout
        while True:
            fwd = ForwardMsg()
            fwd.ParseFromString(self.ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            kind = fwd.WhichOneof("type")
            if kind == "new_session":  # each script run begins with one
                self.session_id = fwd.new_session.initialize.session_id or self.session_id
                run = Run()
            elif kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                _read_element(fwd.delta.new_element, run)
            elif kind == "script_finished":
                status = fwd.script_finished
                if status == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
                    raise RuntimeError("the script did not compile")
                if status == ForwardMsg.FINISHED_SUCCESSFULLY:
                    return run
                # FINISHED_EARLY_FOR_RERUN: the script's st.rerun, whose run follows; a fragment's run: not the page's

    def close(self) -> None:
        self.ws.close()


def _read_element(element, run: Run) -> None:
    kind = element.WhichOneof("type")
    part = getattr(element, kind) if kind else None
    if kind in ("text_input", "button", "text_area"):
        run.widgets[part.label] = part.id
    elif kind in ("markdown", "alert", "heading"):
        run.texts.append(part.body)
