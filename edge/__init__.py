"""The edge: what starts the product, above the app layer: the `labeler` CLI, the HTTP search
server (`labeler serve`), the Streamlit entry scripts and their runner. Installed as `labeler_edge`."""
