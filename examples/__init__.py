"""Examples that ship with Triplet Lens (docs/plugins.md)."""
