"""Grading from the keyboard or a click: save, remember it for undo, and move the focus on.

What a digit does (said on screen): it grades the focused card, then the focus jumps to the next
card you have not graded yet (wrapping round), so an auto-advance never lands on a grade you gave
and a second digit never overwrites it. U (or the Undo button) puts back the grade the last
action replaced, on whichever question it was."""
from __future__ import annotations

import secrets

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from labeler.corpus import Corpus
from labeler_app import label as lb
from labeler_app.access import Actor
from labeler_app.label import CandidateView
from labeler_app.stores import Store
from labeler_pages import _grade_route as gr
from labeler_pages._auth import route_recheck
from labeler_pages._common import Keys, act

SCROLL_PENDING = "_scroll_to_focus"
# With an element besides the <style>: a style-only st.html is kept in the page after the next run
# replaces it, so the outline of an earlier focus would stay.
# The selected grade is filled, so a card's grade reads at a glance (the segmented control's own
# selected look is a pale tint); it rides on the focus mark's <style>, adding no element.
MARK = ('<span hidden data-focus-mark="{n}" data-run="{run}"{reorders}{ticket}></span>'
        "<style>.st-key-cand-{n} {{ outline: 2px solid #1c83e1; outline-offset: 3px; }}"
        '[class*="st-key-cand-"] button[aria-checked="true"], [class*="st-key-hit-"] button[aria-checked="true"] '
        "{{ background: #ff4b4b !important; border-color: #ff4b4b !important; color: #fff; }}"
        '[class*="st-key-cand-"] button[aria-checked="true"] p, [class*="st-key-hit-"] button[aria-checked="true"] p '
        "{{ color: #fff; font-weight: 600; }}</style>")
SCROLL = """<span hidden data-focus="{n}-{nonce}"></span><script>
setTimeout(() => {{
  const card = document.querySelector('.st-key-cand-{n}');
  if (card) card.scrollIntoView({{block: 'nearest', behavior: 'instant'}});
}}, 60);
</script>"""


def grade(s: Store, me: Actor, qid: str, views: list[CandidateView], doc_id: str, value: int | None,
          advance: bool = False, corpus: Corpus | None = None) -> None:
    """Save a grade (None clears it); remember what it replaced; then focus the next ungraded card.

    A key (`advance`) also scrolls to it. A click moves the focus without scrolling (the page must not
    jump under the mouse), so a J or a digit pressed after clicking acts after the clicked card,
    never on a card graded earlier; clearing a grade by click focuses that card."""
    shown = next((v for v in views if v.doc_id == doc_id), None)
    previous = shown.grade if shown is not None else None
    if previous == value:
        return
    ctx = get_script_run_ctx()
    if not (ctx is not None and gr.written_ahead(ctx.session_id, qid, doc_id, value)) and \
            not act(lb.grade, s, me, qid, doc_id, value, corpus, shown=shown):
        return
    st.session_state[Keys.UNDO] = (qid, doc_id, previous, value)
    if advance:
        move_focus(lb.next_ungraded(views, doc_id))
    elif (at := next((i for i, v in enumerate(views) if v.doc_id == doc_id), None)) is not None:
        st.session_state[Keys.FOCUS] = at if value is None else lb.next_ungraded(views, doc_id)


def move_focus(n: int) -> None:
    """Focus card n (0-based) and have the next run scroll it into view."""
    st.session_state[Keys.FOCUS] = n
    st.session_state[SCROLL_PENDING] = True


def undo(s: Store, me: Actor, corpus: Corpus | None = None) -> None:
    """Put back the grade the last action replaced, and focus that card's question."""
    qid, doc_id, previous, value = st.session_state.pop(Keys.UNDO)
    if act(lb.grade, s, me, qid, doc_id, previous, corpus, success=f"Undone: {doc_id} back to "
           f"{'ungraded' if previous is None else previous} (was {'cleared' if value is None else value})."):
        st.session_state[Keys.QUESTION] = qid


def grade_ticket(s: Store, me: Actor, qid: str, views: list[CandidateView], corpus: Corpus | None) -> str | None:
    """This run's ticket for the grade route (pages/_grade_route.py), with which a digit saves its grade
    ahead of the rerun; None outside a browser session."""
    ctx = get_script_run_ctx()
    if ctx is None:
        return None
    return gr.mint(ctx.session_id, s, corpus, qid, views,
                   route_recheck(s, me))


def show_focus(n: int, *, reorders: bool = False, ticket: str | None = None) -> None:
    """Outline card n (0-based); after a keyboard move, also scroll it into view (the focus must be
    where the eyes are), but never on a plain rerun, which would make the page jump. `reorders`: a
    grade's answer re-fills the ungraded cards after it (most likely relevant first), which the key
    queue reads to hold clicks on them until it is in. `ticket` (URL-safe base64, grade_ticket): the
    key queue's way to the grade route."""
    mark = MARK.format(n=n, run=secrets.token_hex(4), reorders=" data-reorders" if reorders else "",
                       ticket=f' data-ticket="{ticket}"' if ticket else "")
    if not st.session_state.pop(SCROLL_PENDING, False):
        st.html(mark)
        return
    st.session_state["_scroll_nonce"] = st.session_state.get("_scroll_nonce", 0) + 1
    st.html(mark + SCROLL.format(n=n, nonce=st.session_state["_scroll_nonce"]), unsafe_allow_javascript=True)


# Keys pressed while the app is still answering the last one used to be lost (presses 60-150 ms
# apart dropped). This queue holds them in the page and replays each once the app is idle again.
# A key the app did not take is put back at the head of the queue and tried again, for up to 3 s
# from when the button it presses is there (enabled, or still loading): on a fresh page Streamlit shows each
# button as a skeleton until its code has loaded, and only then binds the shortcut, so the first
# key used to pass unhandled and the keys after it shifted onto the wrong cards. While the Label
# page is still loading (its keyboard bar not drawn yet: a new tab, the first question's
# candidates being found), a key waits up to 20 s for its button. A key whose button is missing
# or disabled on a loaded page (U with nothing to undo) is dropped.
# Text boxes keep their keys, but Escape leaves them, and Enter in the new-question box (which
# adds the question) leaves it too: the keys typed next grade the new question's first card
# instead of running on into the box.
# Rides on the queue's element: less empty space above the title, so the first card is in view.
KEY_QUEUE = r"""<style>[data-testid="stMainBlockContainer"] { padding-top: 2.5rem !important; }
.labeler-saving[class*="st-key-"] button[aria-checked="true"] { background: repeating-linear-gradient(135deg, #fff 0 6px,
  #ffd6d6 6px 12px) !important; border: 2px dashed #ff4b4b !important; }
.labeler-saving[class*="st-key-"] button[aria-checked="true"] p { color: #a30000 !important; }
.labeler-saving[class*="st-key-"] button.labeler-pending { background: repeating-linear-gradient(135deg, #fff 0 6px,
  #ffd6d6 6px 12px) !important; border: 2px dashed #ff4b4b !important; }
.labeler-saving[class*="st-key-"], .labeler-wait[class*="st-key-"] { position: relative; }
.labeler-saving[class*="st-key-"]::after, .labeler-wait[class*="st-key-"]::after { content: "saving…"; position: absolute;
  left: 100%; top: 50%; transform: translateY(-50%); margin-left: 0.75rem; white-space: nowrap; font-size: 0.85rem; color: #a30000; }
.labeler-wait[class*="st-key-"]::after { content: "re-ordering: click again"; }</style><script>
(() => {
  const w = window;
  document.body.classList.add('labeler-keys');  // the cards show from now on (pages/_cards.py KEYS_GATE)
  if (w.__labelerKeys) return;
  const q = w.__labelerKeys = [];
  const app = () => document.querySelector('[data-testid="stApp"]');
  const busy = () => app()?.getAttribute('data-test-script-state') === 'running';
  // A clicked grade shows as selected in the browser before the server has written it: until a run
  // that began after the click has ended (the server's answer, which redraws the control with the
  // saved grade or names the click as not saved), its card says "saving…" and the grade is hatched,
  // not filled. With the server gone (a restart) it stays so until the page is drawn again.
  let saving = [];
  let savingRun = false;
  // Most likely relevant first (app/judging_order.py): the answer to a grade re-fills the ungraded cards
  // after the graded one with other documents. Until it is in, a click on one of those would land on
  // whatever document the answer puts there, unseen: it is refused (said beside the card), not sent.
  // A grade control's key names its document (pages/_cards.py grade_widget); its card's key, its place.
  const GRADE = '[class*="st-key-grade-"]';
  const options = (n) => document.querySelectorAll('.st-key-cand-' + n + ' ' + GRADE + ' button[role=radio]');
  const slot = (el) => {
    const m = /(?:^|\s)st-key-cand-(\d+)(?:\s|$)/.exec(el.closest('[class*="st-key-cand-"]')?.className || '');
    return m ? +m[1] : -1;
  };
  // Answered means a run has drawn the page since the click: the focus mark carries a token new each run
  // (looking at the run state alone can miss a quick run, and a restarted server's first run draws anew).
  const run = () => document.querySelector('[data-focus-mark]')?.getAttribute('data-run');
  let savedRun = null;
  const refilling = (card) => {
    if (!saving.length || run() !== savedRun || !document.querySelector('[data-focus-mark][data-reorders]')) return false;
    const graded = saving.map(slot).filter((n) => n >= 0);
    return graded.length > 0 && slot(card) > Math.min(...graded) && !card.querySelector('button[aria-checked="true"]');
  };
  const refuse = (card) => {
    card.classList.add('labeler-wait');
    setTimeout(() => card.classList.remove('labeler-wait'), 1200);
  };
  let ahead = null;  // the grade option clicked once the grade route has written its grade: saved already
  document.addEventListener('click', (e) => {
    const card = e.target.closest && e.target.closest(GRADE);  // the grade control: it shows "saving…"
    if (!card || !card.closest('[class*="st-key-cand-"], [class*="st-key-hit-"]') ||
        !e.target.closest('button[role=radio]')) return;
    if (ahead && e.target.closest('button[role=radio]') === ahead) { ahead = null; return; }
    if (refilling(card)) { e.preventDefault(); e.stopImmediatePropagation(); refuse(card); return; }
    card.classList.add('labeler-saving');
    saving.push(card); savingRun = false; savedRun = run();
  }, true);
  let scrollAfter = false;  // a digit's click: once answered, the next card to grade is scrolled into view
  const settle = () => {
    if (!saving.length) return;
    if (busy()) { savingRun = true; return; }
    if (!savingRun && run() === savedRun) return;  // a quick run can pass unseen in the run state: its new mark is not
    saving.forEach((c) => c.classList.remove('labeler-saving')); saving = [];
    const mark = scrollAfter && document.querySelector('[data-focus-mark]');
    const card = mark && document.querySelector('.st-key-cand-' + mark.getAttribute('data-focus-mark'));
    if (card) card.scrollIntoView({block: 'nearest', behavior: 'instant'});
    scrollAfter = false;
  };
  // A digit saves its grade through the grade route (pages/_grade_route.py) with the ticket of the page's
  // last run: hatched and "saving…" until the route has written it, then the grade option is clicked as
  // before and its rerun redraws the rest (the focus moved on, the order, the preview) without writing it
  // again. Without a ticket, or refused (a restarted server, a session ended), the click alone: the old path.
  const save = (mark, option, key) => {
    const ticket = mark.getAttribute('data-ticket');
    const card = option.closest('[class*="st-key-cand-"]') && option.closest(GRADE);
    if (!ticket || !card || !w.fetch) return false;
    mark.removeAttribute('data-ticket');  // once: the rerun brings the next
    option.classList.add('labeler-pending'); card.classList.add('labeler-saving');
    hold(5000);
    const n = mark.getAttribute('data-focus-mark');
    const done = (saved) => {
      option.classList.remove('labeler-pending'); card.classList.remove('labeler-saving');
      const now = option.isConnected ? option : [...options(n)]  // redrawn meanwhile
        .find((b) => b.textContent.trim().startsWith(key + ' '));
      if (!now) return;
      if (saved) ahead = now;
      now.click(); hold(1500);
    };
    fetch(__GRADE_ROUTE__, {method: 'POST', credentials: 'same-origin', cache: 'no-store',
      headers: {'Content-Type': 'application/json'},
      body: JSON.stringify({ticket, card: +n, grade: +key})})
      .then((r) => done(r.status === 204), () => done(false));
    return true;
  };
  // A digit grades the focused card's own grade option, so the grade shows at once (marked "saving…"
  // until the server has written it, as a click is) instead of after the server's answer. The keyboard
  // bar's buttons stay the way in while the cards are not drawn yet.
  let digitRun = null, digitAt = 0;  // the focus mark's token when the last digit graded, and when
  const gradeDirect = (key) => {
    if (!/^[0-3]$/.test(key)) return false;
    const mark = document.querySelector('[data-focus-mark]');
    const option = [...(mark ? options(mark.getAttribute('data-focus-mark')) : [])]
      .find((b) => b.textContent.trim().startsWith(key + ' '));
    if (!option || option.disabled) return false;
    if (refilling(option.closest(GRADE))) return 'wait';  // after the answer re-fills the cards
    // A digit acts on a page its last digit has redrawn (a new focus mark): between two runs of one answer
    // (a grade that changes the question's status reruns the whole page) the page can look idle while its
    // focus is still on the card just graded, and a second digit would overwrite that grade.
    if (run() === digitRun && Date.now() - digitAt < 5000) return 'wait';
    if (option.getAttribute('aria-checked') !== 'true') {
      digitRun = run(); digitAt = Date.now();
      scrollAfter = true;
      if (!save(mark, option, key)) { option.click(); hold(1500); }
    }
    return true;
  };
  const BUTTON = {j: '.st-key-focus-next', k: '.st-key-focus-prev', u: '.st-key-undo-grade', n: '.st-key-next-question',
                  p: '.st-key-prev-question', x: '[class*="st-key-unanswerable-"]'};  // x: its key names the question
  const pressable = (key) => {  // its button is there and enabled, or still loading (a skeleton)
    const c = document.querySelector(BUTTON[key.toLowerCase()] || '.st-key-key-grade-' + key);
    const b = c && c.querySelector('button');
    return b ? !b.disabled : !!(c && c.querySelector('[data-testid="stSkeleton"]'));
  };
  const loading = () => {  // the Label page (or a page not drawn yet) without its keyboard bar so far
    if (document.querySelector('.st-key-keyboard-bar')) return false;
    const title = document.querySelector('h1');
    return !title || title.textContent.trim() === 'Label';
  };
  const keep = (item) => {  // 3 s from when its button is there (a new tab may take longer to draw it)
    const now = Date.now();
    if (pressable(item.key)) return now - (item.since = item.since || now) < 3000;
    return loading() && now - item.first < 20000;
  };
  let waiting = 0;  // time of the last key (or click) the app took; the next key waits until the app has answered it
  let patience = 1500;  // how long to wait for that answer to start
  let sawRun = false;
  let retryAt = 0;
  let left = null, leftUntil = 0;  // the text box just left (Escape, or Enter adding a question)
  let heldRun = null;  // the focus mark's token when the wait began: a new one means a run has drawn the page
  const hold = (ms) => { waiting = Date.now(); patience = ms; sawRun = false; heldRun = run(); };
  const typing = (t) => t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.isContentEditable) &&
    !(t === left && Date.now() < leftUntil);  // keys typed on the instant after leaving it are not typing
  const ours = (e) => !e.ctrlKey && !e.metaKey && !e.altKey && /^[0-3jknpux]$/i.test(e.key) && !typing(e.target);
  // A click starts a run whose answer changes what the keys act on (another question, a card closed):
  // a key pressed before that answer is in would go out with the page as it was.
  document.addEventListener('pointerdown', (e) => {
    if (e.target.closest && e.target.closest('button, [role=option], [role=switch], input, label')) hold(400);
  }, true);
  document.addEventListener('keydown', (e) => {
    const submits = e.key === 'Enter' && typing(e.target) && e.target.closest('[class*="st-key-new_question-"]') &&
      e.target.value.trim();
    if (typing(e.target) && (e.key === 'Escape' || submits)) {
      const box = left = e.target;
      leftUntil = Date.now() + 1000;
      if (submits) hold(5000);  // the question is added and opened by that run: keys wait for it
      setTimeout(() => box.blur(), 0);  // after the app's own handler (a form submits on Enter)
      return;
    }
    if (e.__replayed || !ours(e)) return;
    const queue = () => {
      e.stopImmediatePropagation(); e.preventDefault();
      q.push({key: e.key, code: e.code, keyCode: e.keyCode, first: Date.now()});
    };
    if (busy() || waiting || q.length || e.target === left) {  // from the box just left: replayed once it is blurred
      queue();
      return;
    }
    const direct = gradeDirect(e.key);
    if (direct === 'wait') {
      queue();
    } else if (direct) {
      e.stopImmediatePropagation(); e.preventDefault();
    } else {
      e.__item = {key: e.key, code: e.code, keyCode: e.keyCode, first: Date.now()};
      hold(1500);
    }
  }, true);
  w.addEventListener('keydown', (e) => {  // after the app's own handlers: did it take the key?
    const item = e.__item;
    if (!item || e.defaultPrevented) return;
    waiting = 0;
    if (keep(item)) { q.unshift(item); retryAt = Date.now() + 100; }
  }, false);
  setInterval(() => {
    settle();
    if (waiting) {
      if (busy()) sawRun = true;
      if (!busy() && (sawRun || run() !== heldRun || Date.now() - waiting > patience)) { waiting = 0; patience = 1500; }
      return;
    }
    if (!q.length || busy() || Date.now() < retryAt) return;
    const k = q.shift();
    const direct = gradeDirect(k.key);
    if (direct === 'wait') { q.unshift(k); retryAt = Date.now() + 50; return; }
    if (direct) return;
    hold(1500);
    for (const type of ['keydown', 'keyup']) {
      const ev = new KeyboardEvent(type, {key: k.key, code: k.code, keyCode: k.keyCode, which: k.keyCode,
                                          bubbles: true, cancelable: true});
      ev.__replayed = true;
      if (type === 'keydown') ev.__item = k;
      document.activeElement.dispatchEvent(ev);
    }
  }, 20);
})();
</script>"""


def key_queue() -> None:
    """Install the key queue in the page (once; it survives reruns)."""
    st.html(KEY_QUEUE.replace("__GRADE_ROUTE__", gr.route_literal()), unsafe_allow_javascript=True)
