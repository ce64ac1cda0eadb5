"""Headless Chromium tests."""
