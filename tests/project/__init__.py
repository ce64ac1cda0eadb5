"""Tests of the project's shape: import layers, file sizes, packaging."""
