"""The Evaluate page's view."""
