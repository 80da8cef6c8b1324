"""The browser-test harness itself: a missing chromium fails in CI and skips on a laptop."""
from __future__ import annotations

import pytest

import browser_support


def test_browser_missing_chromium_fails_in_ci(monkeypatch, tmp_path):
    monkeypatch.setattr(browser_support, "CHROMIUM", tmp_path / "no-chromium")
    monkeypatch.setenv("CI", "1")
    with pytest.raises(pytest.fail.Exception, match="no-chromium is missing"):
        browser_support.require_chromium()


def test_browser_missing_chromium_skips_on_a_laptop(monkeypatch, tmp_path):
    monkeypatch.setattr(browser_support, "CHROMIUM", tmp_path / "no-chromium")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception):
        browser_support.require_chromium()
