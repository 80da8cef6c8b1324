"""The pages: Streamlit page scripts (label.py, corpus.py, ...) and the widgets and cached loaders they
share (`_*.py`). Installed as `labeler_pages`; the entry script lives in the edge (`labeler_edge`), not
beside this folder, so Streamlit never runs a page without it."""
