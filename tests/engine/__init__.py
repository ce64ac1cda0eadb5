"""Tests of the engine, grouped by layer."""
