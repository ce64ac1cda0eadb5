"""The HTML export and the presentation mode."""
