"""Metrics (owned by the metrics issue)."""
