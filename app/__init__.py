"""The app layer: what each page shows and does, typed, between `pages/` and the core + `storage/`.

One module per page (`label`, `corpus`, `golden_set`, `evaluate`, `compare`) plus `workspace`
(which corpus the app has open). UI wording lives beside its page here, not in the core. Never
imports streamlit: pages read widgets, call one function here, and render what it returns;
tests call these functions directly. Errors are `labeler.errors.LabelerError`s, shown by the page.
"""
