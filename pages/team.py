"""Team (admins): users and their roles, invites, and the team settings."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from labeler_app import accounts as acc
from labeler_app.stores import ROLES
from labeler_app.queue_order import ORDERS as QUEUE
from labeler_app.suggestions import MODES
from labeler_app.text import inert
from labeler_pages._common import act, actor, guard, show_flash
from labeler_pages._loaders import store

st.title("Team", anchor=False)
s, me = store(), actor()
show_flash()
rows = guard(acc.users, s, me)  # refuses anyone but an admin, whatever the navigation showed
st.dataframe(pd.DataFrame(rows), hide_index=True, key="team_users")

with st.form("add-user", border=True, clear_on_submit=True):
    st.markdown("**Add someone**: they get a one-time link to set their password (7 days), or sign in "
                "through your identity provider with the same address.")
    a1, a2, a3 = st.columns([3, 2, 1.5], vertical_alignment="bottom")
    email = a1.text_input("E-mail", key="add_email")
    name = a2.text_input("Name (optional)", key="add_name")
    role = a3.selectbox("Role", ROLES, index=1, key="add_role")
    if st.form_submit_button("Add and make an invite link", type="primary"):
        link = guard(acc.add_user, s, me, email, role, name=name)
        st.success("Added. Send them this link (it works once):")
        st.code(link, language=None)

if rows:
    with st.container(border=True):
        st.markdown("**Change someone's role, disable them, or make a new invite link**")
        c1, c2, c3 = st.columns([3, 2, 2], vertical_alignment="bottom")
        who = c1.selectbox("User", [r["email"] for r in rows], key="edit_user")
        current = next(r for r in rows if r["email"] == who)
        new_role = c2.selectbox("Role", ROLES, index=ROLES.index(current["role"]), key=f"role_{who}")
        c3.button("Save role", key="save-role", on_click=act, args=(acc.update_user, s, me, who),
                  kwargs={"role": new_role, "success": f"{inert(who)} is now {new_role}."})
        d1, d2, _ = st.columns([1, 1.4, 4])
        flip = not current["disabled"]
        d1.button("Disable" if flip else "Enable", key="toggle-user", on_click=act,
                  args=(acc.update_user, s, me, who), kwargs={"disabled": flip,
                                                              "success": f"{inert(who)} {'disabled' if flip else 'enabled'}."})
        if d2.button("New invite link", key="reinvite"):
            st.code(guard(acc.reinvite, s, me, who), language=None)

st.subheader("Team settings", anchor=False)
settings = acc.team_settings(s)
with st.form("team-settings", border=True):
    hours = st.number_input("Session length (hours)", 0.25, 2160.0, float(settings["session_hours"]), key="set_hours",
                            help=acc.SETTING_HELP["session_hours"])
    choices = ["none", *ROLES]
    default_role = st.selectbox("Role of an unlisted OIDC sign-in", choices, key="set_oidc_role",
                                index=choices.index(settings["oidc_default_role"]),
                                help=acc.SETTING_HELP["oidc_default_role"])
    overlap = st.number_input("Judges per question (overlap)", 1, 20, int(settings["overlap"]), key="set_overlap",
                              help="How many independent judgments \"Next question for me\" collects per question.")
    blind = st.toggle("Blind judging", settings["blind"] is not False, key="set_blind",
                      help="An annotator sees no one else's grades on a question until they have finished it.")
    suggest = st.selectbox("Machine judges' grades on the Label page", list(MODES), key="set_suggestions",
                           index=list(MODES).index(settings["suggestions"]), format_func=lambda m: f"{m}: {MODES[m]}",
                           help="A machine judge's grade of a pair shows on its card as a suggestion: after the annotator "
                                "has graded it (their grade stays blind to it), before (they keep or change it), or never.")
    order = st.selectbox("Work queue order", list(QUEUE), key="set_queue_order", format_func=QUEUE.get,
                         index=list(QUEUE).index(settings["queue_order"]),
                         help="Which question \"Next for me\" offers first among those that still need judges.")
    if st.form_submit_button("Save settings"):
        guard(acc.set_team_setting, s, me, "session_hours", hours)
        guard(acc.set_team_setting, s, me, "oidc_default_role", default_role)
        guard(acc.set_team_setting, s, me, "overlap", int(overlap))
        guard(acc.set_team_setting, s, me, "blind", bool(blind))
        guard(acc.set_team_setting, s, me, "suggestions", suggest)
        guard(acc.set_team_setting, s, me, "queue_order", order)
        st.success("Saved.")
